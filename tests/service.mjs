// Starting the real actiond binary for the npm test packages (tests/connect, tests/web), so
// both drive it the same way: a config file, 127.0.0.1:0 unless told otherwise, and the bound
// address read from the "listening on http://ADDR" line on stderr. It uses Node's own modules
// only, so each package imports it by path without depending on the other.

import { spawn } from "node:child_process";
import { dirname } from "node:path";
import { createInterface } from "node:readline";

/// Starts `bin --config configPath --listen listen` in the config's directory. Resolves with
/// `{ proc, url, addr, stderrLines }` once it listens; rejects with its stderr if it does not
/// within 20 s or exits first. stderr is drained for the whole run, so the service never
/// blocks on a full pipe.
export function startService(bin, configPath, listen = "127.0.0.1:0") {
  const stderrLines = [];
  return new Promise((resolveStart, rejectStart) => {
    const proc = spawn(bin, ["--config", configPath, "--listen", listen], {
      stdio: ["ignore", "ignore", "pipe"],
      cwd: dirname(configPath),
    });
    let settled = false;
    const fail = (why) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      rejectStart(new Error(`${why}\n--- actiond stderr ---\n${stderrLines.join("\n")}`));
    };
    const timer = setTimeout(() => fail("actiond did not print 'listening on http://ADDR' within 20 s"), 20_000);
    proc.on("error", (e) => fail(`cannot start ${bin}: ${e.message}`));
    proc.on("exit", (code, signal) => fail(`actiond exited early (code ${code}, signal ${signal})`));
    createInterface({ input: proc.stderr }).on("line", (raw) => {
      const line = raw.replace(/\x1b\[[0-9;]*m/g, "");
      stderrLines.push(line);
      const m = /listening on (http:\/\/([0-9.]+:[0-9]+))/.exec(line);
      if (m && !settled) {
        settled = true;
        clearTimeout(timer);
        resolveStart({ proc, url: m[1], addr: m[2], stderrLines });
      }
    });
  });
}
