// `buf curl` (the Buf CLI from npm, pinned in package.json) against the real binary, with its
// defaults: the Connect protocol with the binary protobuf codec, which it cannot change. Every
// unary operation, an error, and EventStream, then all of it again with `--protocol grpcweb`
// (gRPC-Web, binary), and with `--protocol grpc --http2-prior-knowledge` against a build with
// the `grpc` feature when $ACTIOND_GRPC_BIN names one (scripts/test.sh builds it). The schema is proto/, the one the service answers by, built once into an
// image so that each call does not compile it again.
//
// Run (see package.json):   npm ci && npm run test:buf
// Binary under test:        $ACTIOND_BIN, default ../../target/debug/actiond
// With the grpc feature:     $ACTIOND_GRPC_BIN (gRPC over HTTP/2), tested when set

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync, spawn } from "node:child_process";
import { mkdtemp, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startService } from "../service.mjs";

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const BIN = process.env.ACTIOND_BIN
  ? resolve(process.env.ACTIOND_BIN)
  : resolve(here, "../../target/debug/actiond");
const GRPC_BIN = process.env.ACTIOND_GRPC_BIN ? resolve(process.env.ACTIOND_GRPC_BIN) : null;
const BUF = join(here, "node_modules/.bin/buf");
const SERVICE = "svc.api.v1.ActionApiService";
const PASSWORD = "buf curl password";

let tmp;
let image;

/** A config with something for every operation to find, and the diagnostics open. */
async function config(dir) {
  // hash-password reads the password from stdin when it is not a terminal.
  const hash = execFileSync(BIN, ["hash-password"], { input: `${PASSWORD}\n` }).toString().trim();
  const path = join(dir, "config.yaml");
  await writeFile(
    path,
    `killGracePeriod: 1
defaultPolicy: {showDiagnostics: true, showLogList: true}
insecureAllowDumpVars: true
insecureAllowDumpActionMap: true
authLocalUsers:
  enabled: true
  users: [{username: ada, usergroup: admins, password: '${hash}'}]
actions:
  - id: hello
    title: Hello
    shell: echo hello {{ who }}
    arguments:
      - {name: who, type: ascii_identifier, default: world}
  - id: slow
    title: Slow
    shell: sleep 30
    timeout: 60
`,
  );
  return path;
}

/** How `buf curl` is told the protocol: gRPC needs HTTP/2, which over cleartext it only
 * speaks with prior knowledge. */
function protocolArgs(protocol) {
  return protocol === "grpc" ? ["--protocol", "grpc", "--http2-prior-knowledge"] : ["--protocol", protocol];
}

/** One `buf curl`: the answer as JSON on success, or the error (code, message) it reports. */
async function bufCurl(base, protocol, op, data) {
  const args = ["curl", "--schema", image, ...protocolArgs(protocol), "-d", JSON.stringify(data ?? {})];
  args.push(`${base}/${SERVICE}/${op}`);
  try {
    const { stdout } = await run(BUF, args, { timeout: 60_000 });
    return { ok: JSON.parse(stdout || "{}") };
  } catch (e) {
    if (e.killed) throw new Error(`buf curl ${op} did not finish`);
    // buf curl reports an RPC error as JSON on stderr and exits with 8 × its gRPC number.
    const text = e.stderr.trim();
    assert.ok(text.startsWith("{"), `buf curl ${op} failed without an RPC error: ${text}`);
    return { error: JSON.parse(text), exit: e.code };
  }
}

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), "actiond-buf-"));
  image = join(tmp, "actiond.binpb");
  await run(BUF, ["build", resolve(here, "../../proto"), "-o", image]);
});

after(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

async function withService(protocol, fn) {
  const dir = await mkdtemp(join(tmp, "svc-"));
  const started = await startService(protocol === "grpc" ? GRPC_BIN : BIN, await config(dir));
  try {
    return await fn(`http://${started.addr}`, started);
  } finally {
    started.proc.kill("SIGKILL");
  }
}

const protocols = ["connect", "grpcweb", ...(GRPC_BIN ? ["grpc"] : [])];
for (const protocol of protocols) {
  test(`buf curl --protocol ${protocol} (binary): every unary operation`, async () => {
    await withService(protocol, async (base) => {
      const call = (op, data) => bufCurl(base, protocol, op, data);
      const ok = async (op, data) => {
        const r = await call(op, data);
        assert.ok(r.ok, `${op}: ${JSON.stringify(r.error)}`);
        return r.ok;
      };
      assert.equal((await ok("GetReadyz")).status, "OK");
      assert.equal((await ok("Init")).pageTitle.length > 0, true);
      assert.equal((await ok("WhoAmI")).authenticatedUser, "guest");
      const dash = await ok("GetDashboard", { title: "" });
      assert.ok(dash.dashboard, JSON.stringify(dash));
      assert.equal((await ok("GetActionBinding", { bindingId: "hello" })).action.bindingId, "hello");
      await ok("GetEntities");
      const missing = await call("GetEntity", { uniqueKey: "x", type: "server" });
      assert.equal(missing.error?.code, "not_found", JSON.stringify(missing));
      assert.equal((await ok("ValidateArgumentType", { type: "int", value: "12" })).valid, true);
      const started = await ok("StartAction", { actionId: "hello" });
      assert.match(started.executionTrackingId, /^[0-9a-f-]{36}$/);
      const waited = await ok("StartActionAndWait", {
        bindingId: "hello",
        arguments: [{ name: "who", value: "buf" }],
      });
      assert.equal(waited.logEntry.stdout, "hello buf\n");
      // exitCode 0 is the default, which binary leaves out and buf curl does not print.
      assert.equal(waited.logEntry.exitCode ?? 0, 0);
      assert.match((await ok("StartActionByGet", { actionId: "hello" })).executionTrackingId, /-/);
      assert.equal((await ok("StartActionByGetAndWait", { actionId: "hello" })).logEntry.stdout, "hello world\n");
      const id = waited.logEntry.executionTrackingId;
      assert.equal((await ok("ExecutionStatus", { executionTrackingId: id })).logEntry.executionTrackingId, id);
      assert.match((await ok("RestartAction", { executionTrackingId: id })).executionTrackingId, /-/);
      const slow = await ok("StartAction", { actionId: "slow" });
      const killed = await ok("KillAction", { executionTrackingId: slow.executionTrackingId });
      assert.equal(killed.killed, true);
      const logs = await ok("GetLogs", { startOffset: "0" });
      assert.ok(logs.logs.length >= 3, JSON.stringify(logs));
      assert.ok(Number(logs.totalCount) >= 3);
      const actionLogs = await ok("GetActionLogs", { actionId: "hello" });
      assert.ok(actionLogs.logs.every((l) => l.actionId === "hello"));
      assert.ok((await ok("SosReport")).alert.length > 0);
      assert.ok(Object.keys((await ok("DumpVars")).contents).length > 0);
      assert.equal((await ok("DumpPublicIdActionMap")).contents.hello.actionTitle, "Hello");
      const diag = await ok("GetDiagnostics");
      assert.ok(diag.SshFoundKey ?? diag.sshFoundKey, JSON.stringify(diag));
      assert.equal((await ok("LocalUserLogin", { username: "ada", password: PASSWORD })).success, true);
      const refused = await call("LocalUserLogin", { username: "ada", password: "wrong" });
      assert.equal(refused.ok?.success ?? false, false, JSON.stringify(refused));
      const hash = await call("PasswordHash", { password: "x" });
      assert.ok(hash.ok?.hash?.startsWith("$argon2id$") || hash.error?.code, JSON.stringify(hash));
      await ok("Logout");
      // An error is the service's, by its code.
      const nope = await call("StartAction", { actionId: "nope" });
      assert.equal(nope.error.code, "not_found");
      assert.match(nope.error.message, /nope/);
      assert.equal(nope.exit, 8 * 5);
    });
  });

  test(`buf curl --protocol ${protocol} (binary): EventStream`, async () => {
    await withService(protocol, async (base, service) => {
      const child = spawn(BUF, ["curl", "--schema", image, ...protocolArgs(protocol), `${base}/${SERVICE}/EventStream`], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      let err = "";
      child.stderr.on("data", (d) => (err += d));
      const exited = new Promise((r) => child.on("exit", (code) => r(code)));
      const seen = (text) =>
        new Promise((resolveSeen, rejectSeen) => {
          const timer = setTimeout(() => rejectSeen(new Error(`no ${text} in: ${out}\n${err}`)), 30_000);
          const look = () => {
            if (out.includes(text)) {
              clearTimeout(timer);
              resolveSeen();
            }
          };
          child.stdout.on("data", (d) => {
            out += d;
            look();
          });
        });
      const finished = seen("executionFinished");
      // Start actions until one shows (the subscription may not be open yet for the first).
      let started = false;
      const starter = (async () => {
        for (let i = 0; i < 20 && !started; i++) {
          await bufCurl(base, protocol, "StartAction", { actionId: "hello" });
          await new Promise((r) => setTimeout(r, 500));
        }
      })();
      await finished;
      started = true;
      await starter;
      for (const member of ["executionStarted", "outputChunk", "executionFinished"]) {
        assert.ok(out.includes(`"${member}"`), `${member} missing: ${out}`);
      }
      // Stopping the service ends the stream cleanly: buf curl reads the end and exits 0.
      service.proc.kill("SIGTERM");
      assert.equal(await exited, 0, `buf curl: ${err}`);
    });
  });
}
