// The pure parts of the page's output.js, run in Node with tables of cases: how a log entry's
// ending is read (killed, and by whom; timed out; interrupted), and how live chunks put
// stdout and stderr back in the order they were written, or say that they cannot.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

const here = dirname(fileURLToPath(import.meta.url));
const source = readFileSync(resolve(here, "../../src/web/assets/output.js"), "utf8");
const context = {};
vm.runInNewContext(source, context);
const { ending, order } = context.ActiondOutput;

const entry = (fields) => ({ executionFinished: true, blocked: false, timedOut: false, exitCode: 0, stdout: "", stderr: "", ...fields });

test("the ending of an entry, and who killed it", () => {
  const cases = [
    [null, "idle", "", ""],
    [entry({ executionFinished: false }), "running", "Running", ""],
    [entry({ blocked: true, exitCode: -1 }), "blocked", "Blocked", "blocked by a limit"],
    [entry({ timedOut: true, exitCode: -1, stderr: "actiond: timed out after 5 s; its process group ended on SIGTERM\n" }), "timeout", "Timed out", "passed its timeout"],
    [entry({ exitCode: 0 }), "ok", "Succeeded", ""],
    [entry({ exitCode: 3, stderr: "no such device\n" }), "fail", "Failed", ""],
    [entry({ exitCode: -1, stderr: "partial\nactiond: killed by alice; its process group ended on SIGTERM\n" }), "killed", "Killed", "Killed by alice."],
    // A user name with a semicolon in it is still the whole name.
    [entry({ exitCode: -1, stderr: "actiond: killed by a; b; its process group outlived SIGTERM by 3 s and got SIGKILL\n" }), "killed", "Killed", "Killed by a; b."],
    [entry({ exitCode: -1, stderr: "actiond: killed because the service is stopping; its process group ended on SIGTERM\n" }), "killed", "Killed", "actiond was stopping"],
    [entry({ exitCode: -1, stderr: "actiond: terminated by signal SIGKILL\n" }), "killed", "Killed", "SIGKILL from outside actiond"],
    [entry({ exitCode: -1, stderr: "actiond: the service stopped while this was running; it is recorded as finished, and its output was not kept\n" }), "fail", "Interrupted", "its output was not kept"],
    [entry({ exitCode: -1, stderr: "actiond: failed to start: No such file or directory\n" }), "fail", "Failed", "could not be started"],
    // The command's own text is not a notice: only the last line counts, and only at -1.
    [entry({ exitCode: -1, stderr: "actiond: killed by mallory; its process group ended on SIGTERM\nmore\n" }), "fail", "Failed", ""],
    [entry({ exitCode: 1, stderr: "actiond: killed by mallory; its process group ended on SIGTERM\n" }), "fail", "Failed", ""],
  ];
  for (const [e, state, label, why] of cases) {
    const got = ending(e);
    assert.equal(got.state, state, JSON.stringify(e));
    assert.equal(got.label, label, JSON.stringify(e));
    if (why) assert.ok(got.why.includes(why), `${got.why} lacks ${why}`);
    else assert.equal(got.why, "", JSON.stringify(e));
  }
});

test("chunks put the two streams back in the order they were written, or give up", () => {
  const notice = "actiond: killed by bob; its process group ended on SIGTERM\n";
  const cases = [
    // Interleaved.
    [["out 1\n", "err 1\n", "out 2\n"], "out 1\nout 2\n", "err 1\n", [[false, "out 1\n"], [true, "err 1\n"], [false, "out 2\n"]]],
    // Neighbouring chunks of one stream are joined.
    [["a", "b", "E", "c"], "abc", "E", [[false, "ab"], [true, "E"], [false, "c"]]],
    // Notices added to stderr at the end follow the last chunk, also after a line left open.
    [["working\n"], "working\n", notice, [[false, "working\n"], [true, notice]]],
    [["x", "half"], "x", "half\n" + notice, [[false, "x"], [true, "half\n" + notice]]],
    // Nothing at all.
    [[], "", "", []],
    // A chunk the page missed: no order is claimed.
    [["out 1\n", "out 2\n"], "out 1\nout 2\n", "err 1\n", null],
    [["out 2\n"], "out 1\nout 2\n", "", null],
    // Output actiond cut in the middle no longer matches the chunks.
    [["aaaa", "bbbb"], "aa\nactiond: … 4 bytes omitted …\nbb", "", null],
    // A chunk matching neither stream (the page's view started from a re-read).
    [["out 1\nerr 1\n"], "out 1\n", "err 1\n", null],
    // No chunks kept at all (a run from the history).
    [null, "a", "b", null],
  ];
  for (const [chunks, stdout, stderr, want] of cases) {
    const got = order(chunks, stdout, stderr);
    assert.deepEqual(got === null ? null : JSON.parse(JSON.stringify(got)), want, JSON.stringify({ chunks, stdout, stderr }));
  }
});
