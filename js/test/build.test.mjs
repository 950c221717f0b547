// The build of chomp-tables.js from js/src/ (js/build.mjs): the committed file
// is exactly what it makes; the modules, imported as they are, are the same
// reader; and the build refuses modules that would only work joined into one
// file. Needs no table directory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as built from "../chomp-tables.js";
import * as modules from "../src/index.js";

const JS = join(dirname(fileURLToPath(import.meta.url)), "..");
const BUILD = join(JS, "build.mjs");
const PUBLISHED = join(JS, "..", "results", "box-8x15");

test("js/chomp-tables.js is what `node js/build.mjs` makes from js/src/", () => {
  const r = spawnSync(process.execPath, [BUILD, "--check"], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /up to date/);
});

test("js/src/index.js, imported as modules, is the reader chomp-tables.js is", async () => {
  assert.deepEqual(Object.keys(modules).sort(), Object.keys(built).sort());
  assert.deepEqual(Object.keys(modules.__testing), Object.keys(built.__testing));
  const a = await modules.openTables(PUBLISHED);
  const b = await built.openTables(PUBLISHED);
  for (const pos of ["5 3 1", "8 8 8 8 8 8 8 8", "15,15,3", "1"]) assert.deepEqual(await a.query(pos), await b.query(pos), pos);
  for (const bad of ["5 0", "16 1", "x"]) {
    await assert.rejects(a.query(bad), (e) => {
      assert.ok(e instanceof modules.ChompTablesError);
      return true;
    });
    const [ea, eb] = await Promise.all([a.query(bad).catch((e) => e), b.query(bad).catch((e) => e)]);
    assert.equal(ea.message, eb.message);
    assert.equal(ea.name, eb.name);
  }
});

/** Builds the modules `files` (name -> text) in a folder of their own: [exit status, output, the file built]. */
function buildOf(files) {
  const dir = mkdtempSync(join(tmpdir(), "chomp-js-build-"));
  try {
    mkdirSync(join(dir, "src"));
    mkdirSync(join(dir, "vendor"));
    writeFileSync(join(dir, "vendor", "dep.js"), "export const dep = 1;\n");
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, "src", name), text);
    const out = join(dir, "out.js");
    const r = spawnSync(process.execPath, [BUILD, "--src", join(dir, "src"), "--out", out], { encoding: "utf8" });
    let file = null;
    try {
      file = readFileSync(out, "utf8");
    } catch {}
    return [r.status, r.stdout + r.stderr, file];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("the build joins modules in import order, exporting only the entry's exports", () => {
  const [status, output, file] = buildOf({
    "index.js": '// The package.\n\nexport { b } from "./b.js";\n',
    "b.js": '// B.\n\nimport { a } from "./a.js";\nimport { dep } from "../vendor/dep.js";\n\nexport function b() {\n  return a + dep;\n}\n',
    "a.js": "// A.\n\nexport const a = 1;\nexport const unused = 2;\n",
  });
  assert.equal(status, 0, output);
  assert.match(file, /^\/\/ The package\.\n/);
  assert.match(file, /^import \{ dep \} from "\.\/vendor\/dep\.js";$/m);
  assert.ok(file.indexOf("const a = 1") < file.indexOf("export function b()"), file);
  assert.match(file, /^const unused = 2;$/m, "a name only modules import is not exported");
  assert.doesNotMatch(file, /from "\.\/a\.js"/);
});

test("the build refuses modules that would only work joined into one file", () => {
  const refusals = [
    [{ "index.js": 'export { a } from "./a.js";\nexport { b } from "./b.js";\n', "b.js": "export const b = () => a;\n", "a.js": "export const a = 1;\n" }, /b\.js uses a without importing it \(from \.\/a\.js\)/],
    [{ "index.js": 'export { b } from "./b.js";\n', "b.js": 'import { a } from "./a.js";\nexport const b = a;\n', "a.js": "const a = 1;\n" }, /imports a from \.\/a\.js, which does not export it/],
    [{ "index.js": 'export { a, b } from "./b.js";\nexport { c } from "./a.js";\n', "b.js": "export const a = 1;\nexport const b = 2;\n", "a.js": "export const a = 1;\nexport const c = 3;\n" }, /a is declared by both/],
    [{ "index.js": 'export { a as b } from "./a.js";\n', "a.js": "export const a = 1;\n" }, /aliases/],
    [{ "index.js": 'export { a } from "./a.js";\n', "a.js": 'import { b } from "./b.js";\nexport const a = 1;\n', "b.js": 'import { a } from "./a.js";\nexport const b = 2;\n' }, /an import cycle: index\.js -> a\.js -> b\.js -> a\.js/],
    [{ "index.js": 'export { a } from "./a.js";\n', "a.js": "export const a = 1;\nimport { b } from './b.js';\n" }, /imports and re-exports go at the top/],
    [{ "index.js": 'export { a } from "./a.js";\n' }, /imports \.\/a\.js, which does not exist/],
  ];
  for (const [files, message] of refusals) {
    const [status, output, file] = buildOf(files);
    assert.equal(status, 1, `${output}\n${JSON.stringify(files)}`);
    assert.match(output, message);
    assert.equal(file, null, "a refused build writes nothing");
  }
});

test("the build says how it is used, and refuses arguments it does not know", () => {
  assert.match(execFileSync(process.execPath, [BUILD, "--help"], { encoding: "utf8" }), /--check/);
  const r = spawnSync(process.execPath, [BUILD, "--frobnicate"], { encoding: "utf8" });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown argument "--frobnicate"/);
});
