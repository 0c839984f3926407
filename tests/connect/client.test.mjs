// Black-box tests of actiond with the real Connect client for Node
// (@connectrpc/connect + @connectrpc/connect-node, JSON over HTTP/1.1),
// generated from proto/svc/api/v1/actiond.proto (the machine-readable form of
// the user's API document).
//
// Run (see package.json):   npm ci && npm run generate && npm test
// Binary under test:        $ACTIOND_BIN, default ../../target/debug/actiond
//
// The test starts the binary itself on 127.0.0.1:0 with a temporary config,
// learns the port from the "listening on http://ADDR" line on stderr and stops
// the process when the tests are done.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { startService as startBinary } from "../service.mjs";
import { setTimeout as sleep } from "node:timers/promises";

import { createClient, ConnectError, Code } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { ActionApiService, LogEntrySchema, GetLogsResponseSchema } from "./gen/svc/api/v1/actiond_pb.js";

const here = dirname(fileURLToPath(import.meta.url));
const BIN = process.env.ACTIOND_BIN
  ? resolve(process.env.ACTIOND_BIN)
  : resolve(here, "../../target/debug/actiond");
const startService = (configPath, listen) => startBinary(BIN, configPath, listen);

const CONFIG = `# written by tests/connect/client.test.mjs
killGracePeriod: 1
# Diagnostics are off by default; these tests read them as everyone.
defaultPolicy: {showDiagnostics: true, showLogList: true}
actions:
  - id: hello
    title: Hello
    shell: "echo hello"
  - id: fail
    title: Fail
    shell: "echo oops >&2; exit 3"
  - id: slow
    title: Slow
    shell: "sleep 30"
    timeout: 60
`;

const DATETIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

let child;
let tmp;
let baseUrl;
let client; // strict: rejects any response field the API document does not list
let plainClient; // the transport exactly as connect-es users write it

// ---------------------------------------------------------------------------
// Service lifecycle
// ---------------------------------------------------------------------------

async function stopService() {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  // exits within killGracePeriod + 2 s.
  const t = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(t);
}

process.on("exit", () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), "actiond-connect-"));
  const configPath = join(tmp, "config.yaml");
  await writeFile(configPath, CONFIG);
  const started = await startService(configPath);
  child = started.proc;
  baseUrl = `http://${started.addr}`;
  client = createClient(
    ActionApiService,
    createConnectTransport({
      baseUrl,
      httpVersion: "1.1",
      useBinaryFormat: false,
      // connect-es ignores unknown response fields by default. The API document
      // lists every field that exists, so the main client is strict.
      jsonOptions: { ignoreUnknownFields: false },
    }),
  );
  plainClient = createClient(
    ActionApiService,
    createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false }),
  );
});

after(async () => {
  await stopService();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

let seq = 0;
const trackingId = (tag) => `t${process.pid}-${Date.now()}-${++seq}-${tag}`;

/** Expect `promise` to reject with a ConnectError of `code`; returns the error. */
async function expectCode(promise, code, what) {
  try {
    const r = await promise;
    assert.fail(`${what}: expected ConnectError ${Code[code]}, got success ${JSON.stringify(r, bigintJson)}`);
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e;
    const ce = ConnectError.from(e);
    assert.equal(
      Code[ce.code],
      Code[code],
      `${what}: expected code ${Code[code]}, got ${Code[ce.code]} (${ce.rawMessage})`,
    );
    assert.ok(ce.rawMessage.length > 0, `${what}: the error message is empty`);
    return ce;
  }
}

function bigintJson(_k, v) {
  return typeof v === "bigint" ? `${v}n` : v;
}

/** Poll ExecutionStatus until the entry is finished (or `ms` passes). */
async function waitFinished(executionTrackingId, ms = 10_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const { logEntry } = await client.executionStatus({ executionTrackingId });
    assert.ok(logEntry, "ExecutionStatus answered without logEntry");
    if (logEntry.executionFinished) return logEntry;
    if (Date.now() > deadline) {
      assert.fail(`execution ${executionTrackingId} not finished after ${ms} ms: ${JSON.stringify(logEntry)}`);
    }
    await sleep(50);
  }
}

async function waitStarted(executionTrackingId, ms = 10_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const { logEntry } = await client.executionStatus({ executionTrackingId });
    if (logEntry?.executionStarted) return logEntry;
    if (Date.now() > deadline) assert.fail(`execution ${executionTrackingId} not started after ${ms} ms`);
    await sleep(50);
  }
}

/** An operation that answers unimplemented is reported as not built yet, not failed. */
function todoIfUnimplemented(t, e, op) {
  const ce = ConnectError.from(e);
  if (ce.code === Code.Unimplemented) {
    t.todo(`${op} answers unimplemented (not built yet): ${ce.rawMessage}`);
    return true;
  }
  return false;
}

// ---------------------------------------------------------------------------
// Starting actions
// ---------------------------------------------------------------------------

let helloEntry; // from the first StartActionAndWait

test("StartActionAndWait hello: exit 0, stdout, a complete LogEntry", async () => {
  const r = await client.startActionAndWait({ actionId: "hello", arguments: [] });
  const e = r.logEntry;
  assert.ok(e, "response has no logEntry");
  assert.equal(e.exitCode, 0);
  assert.equal(e.stdout, "hello\n");
  assert.equal(e.stderr, "");
  assert.equal(e.executionStarted, true);
  assert.equal(e.executionFinished, true);
  assert.equal(e.timedOut, false);
  assert.equal(e.blocked, false);
  assert.equal(e.actionId, "hello");
  assert.equal(e.actionTitle, "Hello");
  assert.match(e.executionTrackingId, UUID, "empty uniqueTrackingId must yield a UUIDv4");
  assert.match(e.datetimeStarted, DATETIME);
  assert.match(e.datetimeFinished, DATETIME);
  assert.ok(e.datetimeFinished >= e.datetimeStarted);
  assert.ok(Array.isArray(e.tags));
  assert.equal(typeof e.user, "string");
  assert.equal(typeof e.userClass, "string");
  helloEntry = e;
});

test("StartActionAndWait fail: exit 3 and its stderr", async () => {
  const { logEntry: e } = await client.startActionAndWait({ actionId: "fail" });
  assert.equal(e.exitCode, 3);
  assert.ok(e.stderr.startsWith("oops\n"), `stderr: ${JSON.stringify(e.stderr)}`);
  assert.equal(e.stdout, "");
  assert.equal(e.executionFinished, true);
  assert.equal(e.timedOut, false);
  assert.equal(e.actionId, "fail");
});

test("StartAction returns the chosen tracking id; ExecutionStatus finds it at once", async () => {
  const id = trackingId("start");
  const r = await client.startAction({ actionId: "hello", arguments: [], uniqueTrackingId: id });
  assert.equal(r.executionTrackingId, id);
  // "Returns once the entry exists, so an immediate ExecutionStatus finds it."
  const { logEntry: now } = await client.executionStatus({ executionTrackingId: id });
  assert.ok(now, "no logEntry right after StartAction");
  assert.equal(now.executionTrackingId, id);
  assert.equal(now.actionId, "hello");
  const done = await waitFinished(id);
  assert.equal(done.exitCode, 0);
  assert.equal(done.stdout, "hello\n");
  // An empty tracking id selects the most recent execution of actionId.
  const { logEntry: latest } = await client.executionStatus({ executionTrackingId: "", actionId: "hello" });
  assert.equal(latest.executionTrackingId, id);
});

test("StartAction without uniqueTrackingId gets a UUIDv4", async () => {
  const r = await client.startAction({ actionId: "hello" });
  assert.match(r.executionTrackingId, UUID);
  await waitFinished(r.executionTrackingId);
});

// ---------------------------------------------------------------------------
// Logs (int64 fields come back as bigint)
// ---------------------------------------------------------------------------

test("GetLogs: newest first, int64 as bigint, paging arithmetic", async () => {
  // Make sure there are more entries than one page (default page size 10).
  for (let i = 0; i < 12; i++) await client.startActionAndWait({ actionId: "hello" });
  const lastId = trackingId("last");
  await client.startActionAndWait({ actionId: "hello", uniqueTrackingId: lastId });

  const p0 = await client.getLogs({ startOffset: 0n });
  assert.equal(typeof p0.totalCount, "bigint");
  assert.equal(typeof p0.countRemaining, "bigint");
  assert.equal(typeof p0.pageSize, "bigint");
  assert.equal(typeof p0.startOffset, "bigint");
  assert.ok(p0.totalCount >= 17n, `totalCount ${p0.totalCount}`);
  assert.equal(p0.pageSize, 10n);
  assert.equal(p0.startOffset, 0n);
  assert.equal(p0.logs.length, 10);
  assert.equal(p0.countRemaining, p0.totalCount - 10n);
  assert.equal(p0.logs[0].executionTrackingId, lastId, "the newest entry must come first");

  // startOffset travels as a JSON string ("1") from connect-es.
  const p1 = await client.getLogs({ startOffset: 1n });
  assert.equal(p1.startOffset, 1n);
  assert.equal(p1.logs[0].executionTrackingId, p0.logs[1].executionTrackingId);
  assert.equal(p1.countRemaining, p1.totalCount - 1n - BigInt(p1.logs.length));

  const tail = await client.getLogs({ startOffset: p0.totalCount - 3n });
  assert.equal(tail.logs.length, 3);
  assert.equal(tail.countRemaining, 0n);

  const past = await client.getLogs({ startOffset: p0.totalCount });
  assert.equal(past.logs.length, 0);
  assert.equal(past.countRemaining, 0n);

  await expectCode(client.getLogs({ startOffset: -1n }), Code.InvalidArgument, "GetLogs startOffset -1");
});

test("GetActionLogs: only the action's entries; unknown action → NotFound", async () => {
  const r = await client.getActionLogs({ actionId: "fail", startOffset: 0n });
  assert.equal(typeof r.totalCount, "bigint");
  assert.equal(r.totalCount, 1n, "exactly one run of 'fail' so far");
  assert.equal(r.logs.length, 1);
  assert.equal(r.logs[0].actionId, "fail");
  assert.equal(r.logs[0].exitCode, 3);
  assert.equal(r.countRemaining, 0n);

  const h = await client.getActionLogs({ actionId: "hello" });
  assert.ok(h.totalCount >= 15n);
  assert.ok(h.logs.every((e) => e.actionId === "hello"));

  await expectCode(client.getActionLogs({ actionId: "nope" }), Code.NotFound, "GetActionLogs unknown action");
});

test("raw JSON (no client): every field present, names from the proto, int64 as strings", async () => {
  // every field present (integrations rely on "exitCode": 0); int64 as
  // decimal strings. The expected names come from the generated schema, so the
  // proto and the wire are checked against each other.
  const post = async (op, body) => {
    const res = await fetch(`${baseUrl}/svc.api.v1.ActionApiService/${op}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Connect-Protocol-Version": "1" },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 200, `${op}: HTTP ${res.status}`);
    assert.match(res.headers.get("content-type"), /^application\/json/);
    return res.json();
  };
  const { logEntry } = await post("StartActionAndWait", { actionId: "hello" });
  assert.deepEqual(Object.keys(logEntry).sort(), LogEntrySchema.fields.map((f) => f.jsonName).sort());
  assert.equal(logEntry.exitCode, 0);
  const logs = await post("GetLogs", {});
  assert.deepEqual(Object.keys(logs).sort(), GetLogsResponseSchema.fields.map((f) => f.jsonName).sort());
  for (const k of ["countRemaining", "pageSize", "totalCount", "startOffset"]) {
    assert.match(logs[k], /^\d+$/, `${k} is an int64 and must be a decimal string, got ${JSON.stringify(logs[k])}`);
  }
});

// ---------------------------------------------------------------------------
// Kill and restart
// ---------------------------------------------------------------------------

test("KillAction of a running 'slow': killed true, then exitCode -1", async () => {
  const id = trackingId("slow");
  await client.startAction({ actionId: "slow", uniqueTrackingId: id });
  await waitStarted(id);
  const k = await client.killAction({ executionTrackingId: id });
  assert.deepEqual(
    { id: k.executionTrackingId, killed: k.killed, alreadyCompleted: k.alreadyCompleted, found: k.found },
    { id, killed: true, alreadyCompleted: false, found: true },
  );
  const e = await waitFinished(id, 5_000); // killGracePeriod is 1 s
  assert.equal(e.exitCode, -1);
  assert.equal(e.timedOut, false);
  assert.equal(e.executionStarted, true);
  assert.equal(e.executionFinished, true);
  assert.match(e.stderr, /(^|\n)actiond:/, "the kill is noted on stderr as an 'actiond:' line");

  const again = await client.killAction({ executionTrackingId: id });
  assert.equal(again.killed, false);
  assert.equal(again.alreadyCompleted, true);
  assert.equal(again.found, true);

  await expectCode(client.killAction({ executionTrackingId: "no-such-execution" }), Code.NotFound, "KillAction unknown id");
});

test("RestartAction runs the same action under a new id", async () => {
  assert.ok(helloEntry, "needs the first test's entry");
  const r = await client.restartAction({ executionTrackingId: helloEntry.executionTrackingId });
  assert.ok(r.executionTrackingId);
  assert.notEqual(r.executionTrackingId, helloEntry.executionTrackingId);
  const e = await waitFinished(r.executionTrackingId);
  assert.equal(e.actionId, "hello");
  assert.equal(e.exitCode, 0);
  assert.equal(e.stdout, "hello\n");
  await expectCode(client.restartAction({ executionTrackingId: "no-such-execution" }), Code.NotFound, "RestartAction unknown id");
});

// ---------------------------------------------------------------------------
// Readiness, routes, error mapping
// ---------------------------------------------------------------------------

test("GetReadyz: status OK", async () => {
  const r = await client.getReadyz({});
  assert.equal(r.status, "OK");
});

test("baseUrl ending in /api (the /api/svc.api.v1.ActionApiService/<Op> route)", async () => {
  const apiClient = createClient(
    ActionApiService,
    createConnectTransport({ baseUrl: `${baseUrl}/api`, httpVersion: "1.1", useBinaryFormat: false }),
  );
  assert.equal((await apiClient.getReadyz({})).status, "OK");
  const { logEntry } = await apiClient.startActionAndWait({ actionId: "hello" });
  assert.equal(logEntry.stdout, "hello\n");
  await expectCode(apiClient.startAction({ actionId: "nope" }), Code.NotFound, "/api StartAction unknown");
});

test("the plain transport (default JSON options) works as well", async () => {
  const { logEntry } = await plainClient.startActionAndWait({ actionId: "hello" });
  assert.equal(logEntry.exitCode, 0);
});

test("errors: unknown action → NotFound", async () => {
  await expectCode(client.startAction({ actionId: "nope" }), Code.NotFound, "StartAction unknown");
  await expectCode(client.startActionAndWait({ actionId: "nope" }), Code.NotFound, "StartActionAndWait unknown");
  await expectCode(client.executionStatus({ executionTrackingId: "no-such-execution" }), Code.NotFound, "ExecutionStatus unknown");
});

test("errors: bad uniqueTrackingId → InvalidArgument; reused → AlreadyExists", async () => {
  await expectCode(client.startAction({ actionId: "hello", uniqueTrackingId: "has space" }), Code.InvalidArgument, "space");
  await expectCode(client.startAction({ actionId: "hello", uniqueTrackingId: "semi;colon" }), Code.InvalidArgument, "semicolon");
  await expectCode(client.startAction({ actionId: "hello", uniqueTrackingId: "x".repeat(65) }), Code.InvalidArgument, "65 chars");
  const id = trackingId("dup");
  await client.startActionAndWait({ actionId: "hello", uniqueTrackingId: id });
  await expectCode(client.startAction({ actionId: "hello", uniqueTrackingId: id }), Code.AlreadyExists, "reused id");
});

test("errors: an operation the service does not have → Unimplemented", async () => {
  // A method descriptor of the same service with a name the service never serves:
  // the client posts to /svc.api.v1.ActionApiService/NoSuchOperation (404, unimplemented).
  const real = ActionApiService.method.getReadyz;
  const fake = { ...real, name: "NoSuchOperation", localName: "noSuchOperation" };
  const fakeClient = createClient(
    { ...ActionApiService, methods: [fake], method: { noSuchOperation: fake } },
    createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false }),
  );
  const ce = await expectCode(fakeClient.noSuchOperation({}), Code.Unimplemented, "unknown operation");
  assert.match(ce.rawMessage, /NoSuchOperation/, "the message names the operation");
});

// ---------------------------------------------------------------------------
// The other operations, each with an empty request. An operation that still
// answers `unimplemented` is reported as TODO (not built yet), not as failure;
// any other answer must be what the API document says.
// ---------------------------------------------------------------------------

const surface = [
  ["GetDashboard", (c) => c.getDashboard({ title: "" }), (r) => {
    // the default dashboard is titled Actions, with one fieldset Actions
    // holding a link per action in config order.
    assert.ok(r.dashboard, "the default dashboard is not null");
    assert.equal(r.dashboard.title, "Actions");
    const fieldset = r.dashboard.contents[0];
    assert.equal(fieldset.type, "fieldset");
    assert.deepEqual(fieldset.contents.map((l) => [l.type, l.action?.bindingId]),
      [["link", "hello"], ["link", "fail"], ["link", "slow"]]);
  }],
  ["StartActionByGet", (c) => c.startActionByGet({ actionId: "hello" }), async (r) => {
    assert.match(r.executionTrackingId, UUID);
    await waitFinished(r.executionTrackingId);
  }],
  ["StartActionByGetAndWait", (c) => c.startActionByGetAndWait({ actionId: "hello" }), (r) => {
    assert.equal(r.logEntry.stdout, "hello\n");
  }],
  ["ValidateArgumentType", (c) => c.validateArgumentType({ value: "abc", type: "ascii" }), (r) => {
    assert.equal(r.valid, true);
  }],
  ["WhoAmI", (c) => c.whoAmI({}), (r) => {
    assert.deepEqual([r.authenticatedUser, r.usergroup, r.provider, r.sid], ["guest", "guest", "system", ""]);
  }],
  ["SosReport", (c) => c.sosReport({}), (r) => assert.ok(r.alert.length > 0)],
  ["DumpVars", (c) => c.dumpVars({}), (r) => {
    assert.ok(r.alert.length > 0, "alert explains the flag");
    assert.deepEqual(r.contents, {});
  }],
  ["DumpPublicIdActionMap", (c) => c.dumpPublicIdActionMap({}), (r) => {
    assert.ok(r.alert.length > 0);
    assert.deepEqual(r.contents, {});
  }],
  ["LocalUserLogin", (c) => c.localUserLogin({ username: "nobody", password: "x" }), (r) => {
    assert.equal(r.success, false);
  }],
  ["Logout", (c) => c.logout({}), () => {}],
  ["GetDiagnostics", (c) => c.getDiagnostics({}), (r) => {
    assert.ok(r.sshFoundKey.length > 0 && r.sshFoundConfig.length > 0, "SshFoundKey/SshFoundConfig filled");
  }, [Code.PermissionDenied]],
  ["Init", (c) => c.init({}), (r) => {
    assert.equal(typeof r.pageTitle, "string");
    assert.equal(r.loginRequired, false);
    assert.deepEqual(r.rootDashboards[0], "Actions");
    assert.equal(r.authenticatedUser, "guest");
  }],
  ["GetActionBinding", (c) => c.getActionBinding({ bindingId: "hello" }), (r) => {
    assert.equal(r.action.bindingId, "hello");
    assert.equal(r.action.title, "Hello");
  }],
  ["GetEntities", (c) => c.getEntities({}), (r) => assert.deepEqual(r.entityDefinitions, [])],
  ["GetEntity", (c) => c.getEntity({ uniqueKey: "x", type: "none" }), null, [Code.NotFound]],
];

for (const [op, call, check, allowedCodes = []] of surface) {
  test(`operation ${op}`, async (t) => {
    let r;
    try {
      r = await call(client);
    } catch (e) {
      if (todoIfUnimplemented(t, e, op)) return;
      const ce = ConnectError.from(e);
      if (allowedCodes.includes(ce.code)) return;
      throw e;
    }
    if (check === null) assert.fail(`${op}: expected an error, got ${JSON.stringify(r, bigintJson)}`);
    await check(r);
  });
}

test("operation PasswordHash", async (t) => {
  try {
    const r = await client.passwordHash({ password: "correct horse" });
    assert.match(r.hash, /^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$/);
  } catch (e) {
    if (!todoIfUnimplemented(t, e, "PasswordHash")) throw e;
  }
});

// ---------------------------------------------------------------------------
// EventStream (server streaming): started, output, finished for one run
// ---------------------------------------------------------------------------

test("EventStream: executionStarted, outputChunk, executionFinished of a run", { timeout: 20_000 }, async (t) => {
  const ac = new AbortController();
  let headersSeen;
  const headers = new Promise((r) => (headersSeen = r));
  const id = trackingId("ev");
  const events = [];
  const stream = client.eventStream({}, { signal: ac.signal, onHeader: () => headersSeen() });
  const reader = (async () => {
    for await (const ev of stream) {
      events.push(ev.event);
      if (ev.event.case === "executionFinished" && ev.event.value.logEntry?.executionTrackingId === id) return;
    }
    throw new Error("the stream ended before executionFinished");
  })();
  reader.catch(() => {}); // observed through the races below
  const timer = new AbortController();
  try {
    // the subscription exists before the response headers are sent.
    await Promise.race([
      headers,
      reader,
      sleep(5_000, null, { signal: timer.signal }).then(
        () => assert.fail("EventStream: no response headers within 5 s (headers are sent before any event)"),
        () => new Promise(() => {}),
      ),
    ]);
    await client.startAction({ actionId: "hello", uniqueTrackingId: id });
    await Promise.race([
      reader,
      sleep(10_000, null, { signal: timer.signal }).then(
        () => assert.fail(`no executionFinished for ${id} in 10 s; got ${JSON.stringify(events, bigintJson)}`),
        () => new Promise(() => {}), // cancelled: never settles
      ),
    ]);
  } catch (e) {
    if (e instanceof ConnectError && todoIfUnimplemented(t, e, "EventStream")) return;
    throw e;
  } finally {
    timer.abort();
    ac.abort();
  }

  const mine = events.filter((ev) => {
    const v = ev.value;
    return (v?.logEntry?.executionTrackingId ?? v?.executionTrackingId) === id;
  });
  const kinds = mine.map((ev) => ev.case);
  assert.equal(kinds[0], "executionStarted", `order: ${kinds}`);
  assert.equal(kinds.at(-1), "executionFinished", `order: ${kinds}`);
  const output = mine.filter((ev) => ev.case === "outputChunk").map((ev) => ev.value.output).join("");
  assert.equal(output, "hello\n");
  const fin = mine.at(-1).value.logEntry;
  assert.equal(fin.exitCode, 0);
  assert.equal(fin.stdout, "hello\n");
  assert.equal(fin.executionFinished, true);
});

// A quiet stream carries a keep-alive after about 5 s without an event: an outputChunk of no
// execution and no text, which the strict client decodes like any chunk, and a reader of
// its runs' output reads past. The events of a run still come whole after it.
test("EventStream: keep-alives on a quiet stream decode as empty output chunks", { timeout: 30_000 }, async () => {
  const ac = new AbortController();
  const seen = [];
  const id = trackingId("quiet");
  let quietLongEnough;
  const quiet = new Promise((r) => (quietLongEnough = r));
  const reader = (async () => {
    for await (const ev of client.eventStream({}, { signal: ac.signal })) {
      const keepAlive = ev.event.case === "outputChunk" && ev.event.value.executionTrackingId === "" && ev.event.value.output === "";
      seen.push(keepAlive ? "keep-alive" : ev.event.case);
      if (keepAlive) quietLongEnough();
      if (ev.event.case === "executionFinished" && ev.event.value.logEntry?.executionTrackingId === id) return;
    }
    throw new Error("the stream ended before executionFinished");
  })();
  reader.catch(() => {});
  try {
    await Promise.race([quiet, reader, sleep(12_000).then(() => assert.fail(`no keep-alive in 12 s of quiet: ${seen}`))]);
    await client.startAction({ actionId: "hello", uniqueTrackingId: id });
    await Promise.race([reader, sleep(10_000).then(() => assert.fail(`no executionFinished for ${id}: ${seen}`))]);
  } finally {
    ac.abort();
  }
  assert.equal(seen[0], "keep-alive", `the first message of a quiet stream: ${seen}`);
  assert.deepEqual(seen.filter((c) => c !== "keep-alive").slice(0, 1), ["executionStarted"], `${seen}`);
});

// ---------------------------------------------------------------------------
// The transports' defaults: binary protobuf, and gRPC-Web
// ---------------------------------------------------------------------------

/** A unary call, an error and a stream through `transport`, as its users write it. */
async function exercise(transport, what) {
  const c = createClient(ActionApiService, transport);
  assert.equal((await c.getReadyz({})).status, "OK", what);
  const { logEntry: e } = await c.startActionAndWait({ actionId: "fail" });
  assert.equal(e.exitCode, 3, what);
  assert.ok(e.stderr.startsWith("oops\n"), `${what}: ${JSON.stringify(e.stderr)}`);
  await expectCode(c.startAction({ actionId: "no-such-action" }), Code.NotFound, what);
  const logs = await c.getLogs({ startOffset: 0n });
  assert.equal(typeof logs.totalCount, "bigint", what);
  assert.ok(logs.totalCount > 0n, what);
  // The stream: everything of one run, then the end.
  const ac = new AbortController();
  const id = trackingId("transport");
  const seen = [];
  const reading = (async () => {
    for await (const ev of c.eventStream({}, { signal: ac.signal, timeoutMs: 15_000 })) {
      const v = ev.event.value;
      if ((v?.logEntry?.executionTrackingId ?? v?.executionTrackingId) !== id) continue;
      seen.push(ev.event.case);
      if (ev.event.case === "executionFinished") return;
    }
  })();
  await sleep(300);
  await c.startAction({ actionId: "hello", uniqueTrackingId: id });
  await reading;
  ac.abort();
  assert.equal(seen[0], "executionStarted", `${what}: ${seen}`);
  assert.equal(seen.at(-1), "executionFinished", `${what}: ${seen}`);
}

test("connect-node's default codec (binary protobuf) works", async () => {
  await exercise(createConnectTransport({ baseUrl, httpVersion: "1.1" }), "Connect, binary");
});

test("gRPC-Web, binary and JSON (connect-node's gRPC-Web transport, as browsers speak it)", async () => {
  for (const useBinaryFormat of [true, false]) {
    const transport = createGrpcWebTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat });
    await exercise(transport, `gRPC-Web, ${useBinaryFormat ? "binary" : "JSON"}`);
  }
});
