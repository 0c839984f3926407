// nginx from Debian in front of actiond under /actiond/, with the location block docs/web-page.md
// recommends; the rest of its config only keeps nginx inside a temporary directory.
// Shared by the tests that look at the page behind a sub-path.

import { spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/// A free TCP port on 127.0.0.1 (bound, then released for nginx to take).
function freePort() {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolvePort(port));
    });
  });
}

/// nginx from Debian in front of actiond under /actiond/, with the location block
/// docs/web-page.md recommends; the rest only keeps nginx inside a temporary directory.
export async function startNginx(upstream) {
  const own = await mkdtemp(join(tmpdir(), "actiond-nginx-"));
  await chmod(own, 0o755);
  const port = await freePort();
  await writeFile(join(own, "nginx.conf"), `
daemon off;
worker_processes 1;
pid ${own}/nginx.pid;
error_log ${own}/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${own}/body;
  proxy_temp_path ${own}/proxy;
  fastcgi_temp_path ${own}/fastcgi;
  uwsgi_temp_path ${own}/uwsgi;
  scgi_temp_path ${own}/scgi;
  server {
    listen 127.0.0.1:${port};
    location /actiond/ {
      proxy_pass http://${upstream}/;
      proxy_http_version 1.1;
      proxy_set_header Host $http_host;
    }
  }
}
`);
  const proc = spawn("nginx", ["-p", own, "-c", join(own, "nginx.conf"), "-e", join(own, "error.log")], { stdio: "ignore" });
  // Ready when it answers.
  for (let i = 0; ; i++) {
    try {
      await fetch(`http://127.0.0.1:${port}/`);
      break;
    } catch (e) {
      if (i > 200 || proc.exitCode !== null) throw new Error(`nginx did not start: ${await readFile(join(own, "error.log"), "utf8").catch(() => e.message)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGQUIT");
      await exited;
      await rm(own, { recursive: true, force: true });
    },
  };
}
