// JSON in canonical form (FORMAT.md section 3): a strict parser that keeps key
// order and large integers, and the canonical printer.

// Key order of every parsed object (JS objects put integer-like keys first).
const KEY_ORDER = new WeakMap();
export const keysOf = (o) => KEY_ORDER.get(o) || Object.keys(o);

export class JsonProblem extends Error {}

/** A strict JSON parser that keeps each object's key order, refuses duplicate
 * keys and gives integers beyond 2^53 as BigInt (so they are never rounded). */
export function parseJson(text) {
  let i = 0;
  const n = text.length;
  const fail = (what) => {
    throw new JsonProblem(`${what} at character ${i}`);
  };
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
  };
  const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
  const value = (depth) => {
    if (depth > 64) fail("nesting too deep");
    ws();
    if (i >= n) fail("unexpected end of data");
    const c = text[i];
    if (c === "{") {
      i++;
      const obj = {};
      const keys = [];
      ws();
      if (text[i] === "}") {
        i++;
      } else {
        for (;;) {
          ws();
          if (text[i] !== '"') fail("expected a string key");
          const key = string();
          if (keys.includes(key)) fail(`duplicate key ${JSON.stringify(key)}`);
          ws();
          if (text[i] !== ":") fail("expected ':'");
          i++;
          const v = value(depth + 1);
          Object.defineProperty(obj, key, { value: v, enumerable: true, writable: true, configurable: true });
          keys.push(key);
          ws();
          if (text[i] === ",") {
            i++;
            continue;
          }
          if (text[i] === "}") {
            i++;
            break;
          }
          fail("expected ',' or '}'");
        }
      }
      KEY_ORDER.set(obj, keys);
      return obj;
    }
    if (c === "[") {
      i++;
      const arr = [];
      ws();
      if (text[i] === "]") {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value(depth + 1));
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return arr;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return string();
    if (text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    if (text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) fail("expected a value");
    i = NUMBER.lastIndex;
    if (m[1] === undefined && m[2] === undefined) {
      const v = Number(m[0]);
      return Number.isSafeInteger(v) ? v : BigInt(m[0]);
    }
    return Number(m[0]);
  };
  const string = () => {
    i++; // the opening quote
    let out = "";
    for (;;) {
      if (i >= n) fail("unterminated string");
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return out;
      }
      if (c < 0x20) fail("control character in a string");
      if (c === 0x5c) {
        const e = text[i + 1];
        const simple = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
        if (e in simple) {
          out += simple[e];
          i += 2;
        } else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
        } else fail("invalid escape");
      } else {
        out += text[i];
        i++;
      }
    }
  };
  const v = value(0);
  ws();
  if (i !== n) fail("extra data");
  return v;
}

/** The canonical text of a JSON value (FORMAT.md section 3): two-space
 * indentation, `"key": value`, keys in the parsed order — what Python's
 * json.dumps(indent=2, ensure_ascii=False) and serde_json's pretty printer write. */
export function canonicalJson(v, indent = "") {
  if (v === null) return "null";
  if (typeof v === "boolean" || typeof v === "bigint") return String(v);
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : JSON.stringify(v);
  if (typeof v === "string") return JSON.stringify(v);
  const inner = indent + "  ";
  if (Array.isArray(v)) {
    if (!v.length) return "[]";
    return "[\n" + v.map((x) => inner + canonicalJson(x, inner)).join(",\n") + "\n" + indent + "]";
  }
  const keys = keysOf(v);
  if (!keys.length) return "{}";
  return "{\n" + keys.map((k) => inner + JSON.stringify(k) + ": " + canonicalJson(v[k], inner)).join(",\n") + "\n" + indent + "}";
}
