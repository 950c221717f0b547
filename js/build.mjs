#!/usr/bin/env node
// Builds js/chomp-tables.js, the reader's one file (what package.json, the
// page and `chomp site` load), from the ES modules of js/src/: src/index.js
// and the modules it imports, each placed after those it imports, under a
// rule naming it. The modules share the one file's scope, so the build keeps
// them honest: every name a module takes from another is imported (and
// exported there), no two modules declare the same top-level name, imports
// have no cycle and no alias, and only what src/index.js exports stays
// exported. A relative import of a file outside src/ (vendor/fzstd.js) is
// kept, its path made relative to js/. No dependency: Node 20 or later.
//
// Usage: node js/build.mjs           write js/chomp-tables.js (a .tmp file, renamed)
//        node js/build.mjs --check   exit 1 if js/chomp-tables.js is not what the build makes
//        --src DIR --out FILE        other modules and file (the build's own tests)

import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, posix, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const ENTRY = "index.js";
// The modules' folder, the file built and the folder it lies in (set by main).
let SRC = join(ROOT, "js", "src");
let OUT = join(ROOT, "js", "chomp-tables.js");
let JS = dirname(OUT);
const RULE = "// " + "-".repeat(66) + " ";
const NAME = /^[A-Za-z_$][\w$]*$/;
const DECLARATION = /^(export )?(?:async )?(?:function\*?|class|const|let|var) ([A-Za-z_$][\w$]*)/;

class BuildError extends Error {}

/** A path as messages show it: from the repository's root when inside it. */
const show = (path) => {
  const r = relative(ROOT, path);
  return r && !r.startsWith("..") ? r.split(sep).join("/") : path;
};

const fail = (what) => {
  throw new BuildError(what);
};

/** One module of src/: its leading comment, imports, re-exports and body. */
function readModule(file) {
  const where = show(join(SRC, file));
  const text = readFileSync(join(SRC, file), "utf8");
  if (text.includes("\r")) fail(`${where}: carriage return (the build writes \\n line ends only)`);
  const lines = text.split("\n");
  let i = 0;
  while (i < lines.length && lines[i].startsWith("//")) i++;
  const header = lines.slice(0, i);
  const imports = [];
  const reexports = [];
  const external = [];
  const links = []; // the modules of src/ imported or re-exported from, in the order written
  const statement = /(import|export) \{([^}]*)\} from "([^"]+)";\n/y;
  let rest = lines.slice(i).join("\n");
  for (;;) {
    rest = rest.replace(/^\n+/, "");
    statement.lastIndex = 0;
    const m = statement.exec(rest);
    if (!m) break;
    rest = rest.slice(statement.lastIndex);
    const [, kind, list, from] = m;
    const names = list.split(",").map((s) => s.trim()).filter(Boolean);
    for (const n of names) {
      if (!NAME.test(n)) fail(`${where}: ${kind} of ${JSON.stringify(n)}: aliases (as) are not supported, the modules share one scope in chomp-tables.js`);
    }
    if (!from.startsWith("./") && !from.startsWith("../")) fail(`${where}: ${kind} from ${JSON.stringify(from)}: only relative paths (import node: modules lazily, inside a function)`);
    const target = resolve(SRC, from);
    if (dirname(target) === SRC) {
      (kind === "import" ? imports : reexports).push({ names, file: posix.basename(from) });
      links.push(posix.basename(from));
    } else if (target.startsWith(SRC + sep)) {
      fail(`${where}: ${kind} from ${JSON.stringify(from)}: the modules lie in ${show(SRC)}/ itself, not in folders of it`);
    } else if (kind === "import") {
      external.push({ names, from: "./" + relative(JS, target).split(sep).join("/") });
    } else {
      fail(`${where}: re-exports ${from}, outside ${show(SRC)}/`);
    }
  }
  const body = rest.replace(/\s+$/, "").split("\n");
  const declared = new Map();
  const exported = new Set();
  for (const line of body) {
    if (/^(import|export) *[{*]|^export default\b|^import\b/.test(line)) {
      fail(`${where}: ${JSON.stringify(line)}: imports and re-exports go at the top, as \`import { a, b } from "./x.js";\`; no default or * exports`);
    }
    const d = DECLARATION.exec(line);
    if (/^(export )?(const|let|var) *[{[]/.test(line)) fail(`${where}: ${JSON.stringify(line)}: no destructuring at the top level`);
    if (line.startsWith("export ") && !d) fail(`${where}: ${JSON.stringify(line)}: export a declaration (function, class, const)`);
    if (!d) continue;
    if (declared.has(d[2])) fail(`${where}: ${d[2]} declared twice`);
    declared.set(d[2], line);
    if (d[1]) exported.add(d[2]);
  }
  return { file, where, header, imports, reexports, external, links, body, declared, exported };
}

/** The modules reachable from the entry, each after the modules it imports. */
function collect() {
  const modules = new Map();
  const order = [];
  const visit = (file, path) => {
    if (path.includes(file)) fail(`an import cycle: ${[...path, file].join(" -> ")}`);
    if (modules.has(file)) return;
    if (!existsSync(join(SRC, file))) fail(path.length ? `${show(join(SRC, path[path.length - 1]))} imports ./${file}, which does not exist` : `no ${show(join(SRC, file))}`);
    const m = readModule(file);
    modules.set(file, m);
    for (const dep of m.links) visit(dep, [...path, file]);
    order.push(m);
  };
  visit(ENTRY, []);
  return order;
}

/** The identifiers a module's code uses as variables: not in comments,
 * strings, template text or regular expressions, not after a `.`. */
function identifiers(code) {
  const used = new Set();
  const n = code.length;
  const templates = []; // for each open `${`: the braces opened since
  let prev = "";
  let i = 0;
  const regexAfter = /^(|[(,=:[!&|?{};+\-*%<>~^]|return|typeof|case|do|else|in|of|new|delete|void|throw|yield|await)$/;
  const template = () => {
    // From just after a backquote or a `}` closing `${`: the text up to the next `${` or the closing backquote.
    for (; i < n; i++) {
      if (code[i] === "\\") i++;
      else if (code[i] === "`") {
        i++;
        prev = "str";
        return;
      } else if (code[i] === "$" && code[i + 1] === "{") {
        i += 2;
        templates.push(0);
        prev = "{";
        return;
      }
    }
  };
  while (i < n) {
    const c = code[i];
    if (/\s/.test(c)) i++;
    else if (c === "/" && code[i + 1] === "/") {
      while (i < n && code[i] !== "\n") i++;
    } else if (c === "/" && code[i + 1] === "*") {
      const end = code.indexOf("*/", i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === '"' || c === "'") {
      for (i++; i < n && code[i] !== c; i++) if (code[i] === "\\") i++;
      i++;
      prev = "str";
    } else if (c === "`") {
      i++;
      template();
    } else if (c === "/" && regexAfter.test(prev)) {
      let cls = false;
      for (i++; i < n; i++) {
        if (code[i] === "\\") i++;
        else if (code[i] === "[") cls = true;
        else if (code[i] === "]") cls = false;
        else if (code[i] === "/" && !cls) break;
      }
      i++;
      while (i < n && /[a-z]/.test(code[i])) i++;
      prev = "regex";
    } else if (/[A-Za-z_$]/.test(c)) {
      const start = i;
      while (i < n && /[\w$]/.test(code[i])) i++;
      const word = code.slice(start, i);
      if (prev !== ".") used.add(word);
      prev = word;
    } else if (/[0-9]/.test(c)) {
      while (i < n && /[\w.]/.test(code[i])) i++;
      prev = "num";
    } else if (c === "?" && code[i + 1] === "." && !/[0-9]/.test(code[i + 2])) {
      i += 2;
      prev = ".";
    } else if (c === "." && code[i + 1] === "." && code[i + 2] === ".") {
      i += 3;
      prev = "...";
    } else {
      i++;
      if (templates.length && c === "{") templates[templates.length - 1]++;
      else if (templates.length && c === "}") {
        if (templates[templates.length - 1] === 0) {
          templates.pop();
          template();
          continue;
        }
        templates[templates.length - 1]--;
      }
      prev = c;
    }
  }
  return used;
}

/** The single file, from the modules in order (the entry last). */
function bundle(modules) {
  const entry = modules[modules.length - 1];
  const owner = new Map();
  for (const m of modules) {
    for (const name of m.declared.keys()) {
      if (owner.has(name)) fail(`${name} is declared by both ${owner.get(name).where} and ${m.where}: the modules share one scope in chomp-tables.js`);
      owner.set(name, m);
    }
  }
  for (const m of modules) {
    const code = m.body.join("\n");
    const imported = new Set();
    for (const { names, file } of [...m.imports, ...m.reexports]) {
      const from = modules.find((x) => x.file === file);
      for (const name of names) {
        if (!from.exported.has(name)) fail(`${m.where} imports ${name} from ./${file}, which does not export it`);
        imported.add(name);
      }
    }
    for (const { names } of m.external) names.forEach((name) => imported.add(name));
    // Names declared anywhere in the module (a local may shadow another module's).
    const local = new Set([...code.matchAll(/\b(?:const|let|var|function|class)\s+([A-Za-z_$][\w$]*)/g)].map((x) => x[1]));
    const missing = [...identifiers(code)].filter((w) => owner.has(w) && owner.get(w) !== m && !imported.has(w) && !local.has(w));
    if (missing.length) fail(`${m.where} uses ${missing.join(", ")} without importing ${missing.length === 1 ? "it" : "them"} (from ${[...new Set(missing.map((w) => "./" + owner.get(w).file))].join(", ")})`);
  }
  const exported = new Set([...entry.reexports.flatMap((r) => r.names), ...entry.exported]);
  const external = new Map();
  for (const m of modules) {
    for (const { names, from } of m.external) {
      const have = external.get(from) || [];
      external.set(from, [...have, ...names.filter((x) => !have.includes(x))]);
    }
  }
  const out = [
    ...entry.header,
    "//",
    `// This file is generated: \`node js/build.mjs\` joins the modules of ${show(SRC)}/`,
    "// (index.js and what it imports), each below under a rule naming it. Edit",
    "// those and run the build; `node js/build.mjs --check` tells whether this",
    "// file is up to date.",
    "",
  ];
  for (const [from, names] of external) out.push(`import { ${names.join(", ")} } from "${from}";`);
  for (const m of modules) {
    if (!m.body.join("").trim()) continue;
    out.push("", RULE + `${posix.basename(show(SRC))}/${m.file}`, "");
    if (m !== entry && m.header.length) out.push(...m.header, "");
    for (const line of m.body) {
      const d = DECLARATION.exec(line);
      out.push(d && d[1] && !exported.has(d[2]) ? line.slice("export ".length) : line);
    }
  }
  return out.join("\n") + "\n";
}

function main(args) {
  const usage = "usage: node js/build.mjs [--check] [--src DIR --out FILE]   (writes js/chomp-tables.js from js/src/; --check: only compares)";
  if (args.includes("--help") || args.includes("-h")) {
    console.log(usage);
    return 0;
  }
  let check = false;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--check") check = true;
    else if ((args[i] === "--src" || args[i] === "--out") && i + 1 < args.length) {
      const path = resolve(args[++i]);
      if (args[i - 1] === "--src") SRC = path;
      else OUT = path;
    } else {
      const what = args[i] === "--src" || args[i] === "--out" ? `${args[i]} needs a value` : `unknown argument ${JSON.stringify(args[i])}`;
      console.error(`js/build.mjs: ${what}; ${usage}`);
      return 2;
    }
  }
  JS = dirname(OUT);
  const modules = collect();
  const built = bundle(modules);
  const name = show(OUT);
  if (check) {
    const have = existsSync(OUT) ? readFileSync(OUT, "utf8") : null;
    if (have === built) {
      console.log(`${name} is up to date with ${show(SRC)}/ (${modules.length} modules)`);
      return 0;
    }
    let detail = "it does not exist";
    if (have !== null) {
      const a = have.split("\n");
      const b = built.split("\n");
      let k = 0;
      while (k < a.length && k < b.length && a[k] === b[k]) k++;
      detail = `first difference at line ${k + 1}: committed ${JSON.stringify(a[k] ?? "(end of file)")}, built ${JSON.stringify(b[k] ?? "(end of file)")}`;
    }
    console.error(`${name} is not what js/build.mjs makes from ${show(SRC)}/ (${detail}): run \`node js/build.mjs\` and commit the result`);
    return 1;
  }
  const tmp = OUT + ".tmp";
  writeFileSync(tmp, built);
  renameSync(tmp, OUT);
  console.log(`${name}: ${built.split("\n").length - 1} lines from ${modules.length} modules of ${show(SRC)}/`);
  return 0;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (e) {
  if (!(e instanceof BuildError)) throw e;
  console.error(`js/build.mjs: ${e.message}`);
  process.exitCode = 1;
}
