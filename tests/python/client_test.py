"""The official Python Connect client (PyPI connectrpc) against the real binary, twice: with
its defaults (the binary protobuf codec, gzipped request bodies), and with the JSON codec, the
API document's own. Gzip makes it the client that shows whether actiond reads
Connect-Content-Encoding on a stream. The code is generated from proto/ by grpcio-tools'
protoc with protoc-gen-py and protoc-gen-connectrpc (scripts/test.sh does it).

Run: ACTIOND_BIN=target/debug/actiond python client_test.py (from a venv with those
packages, with the generated code in ./gen). Exits non-zero on the first failure.
"""

import asyncio
import os
import re
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))

from connectrpc.code import Code  # noqa: E402
from connectrpc.codec import proto_json_codec  # noqa: E402
from connectrpc.errors import ConnectError  # noqa: E402
from svc.api.v1 import actiond_pb as pb  # noqa: E402
from svc.api.v1.actiond_connect import ActionApiServiceClient  # noqa: E402

CONFIG = """\
killGracePeriod: 1
actions:
  - id: hello
    title: Hello
    shell: echo hello {{ who }}
    arguments:
      - {name: who, type: "regex:[a-z]{2,8}", default: world}
  - id: sleepy
    title: Sleepy
    shell: sleep 30
"""


def start(binary, directory):
    config = os.path.join(directory, "config.yaml")
    with open(config, "w") as f:
        f.write(CONFIG)
    proc = subprocess.Popen(
        [binary, "--config", config, "--listen", "127.0.0.1:0"],
        cwd=directory,
        stderr=subprocess.PIPE,
        text=True,
    )
    for line in proc.stderr:
        m = re.search(r"listening on (http://[0-9.]+:[0-9]+)", line)
        if m:
            # Keep reading so that actiond never blocks on a full pipe.
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            return proc, m.group(1)
    raise SystemExit("actiond exited before it listened")


async def check(base, codec):
    # Everything is the client's default, gzipped requests included, but the codec when one
    # is given.
    options = {} if codec is None else {"codec": codec}
    async with ActionApiServiceClient(base, **options) as client:
        # Unary calls, gzipped by default.
        ready = await client.get_readyz(pb.GetReadyzRequest())
        assert ready.status == "OK", ready
        done = await client.start_action_and_wait(
            pb.StartActionAndWaitRequest(
                action_id="hello",
                arguments=[pb.ExecutionArgument(name="who", value="ada")],
            )
        )
        assert done.log_entry.stdout == "hello ada\n", done
        assert done.log_entry.exit_code == 0, done
        # A regex: argument is checked by its declaration, never by a pattern sent along.
        v = await client.validate_argument_type(
            pb.ValidateArgumentTypeRequest(binding_id="hello", argument_name="who", value="ADA")
        )
        assert not v.valid and "pattern" in v.description, v
        v = await client.validate_argument_type(
            pb.ValidateArgumentTypeRequest(type="regex:(?:.{0,100}){0,100}x", value="a")
        )
        assert not v.valid and "bindingId" in v.description, v
        try:
            await client.start_action(pb.StartActionRequest(action_id="nope"))
            raise AssertionError("an unknown action started")
        except ConnectError as e:
            assert e.code == Code.NOT_FOUND, e

        # The event stream, its request envelope gzipped: it opens, and carries a run.
        opened = asyncio.Event()
        wanted = {}

        async def listen():
            stream = client.event_stream(pb.EventStreamRequest(), timeout_ms=20000)
            opened.set()
            async for event in stream:
                # Its finish: a quiet stream opened after it must not see the run's last event.
                finished = event.event is not None and event.event.field == "execution_finished"
                if "id" in wanted and wanted["id"] in str(event) and finished:
                    return event

        listener = asyncio.create_task(listen())
        await opened.wait()
        await asyncio.sleep(0.5)
        started = await client.start_action(
            pb.StartActionRequest(
                action_id="hello", arguments=[pb.ExecutionArgument(name="who", value="bob")]
            )
        )
        wanted["id"] = started.execution_tracking_id
        event = await asyncio.wait_for(listener, 15)
        assert event is not None, "the stream ended without an event of the run"

        # A quiet stream carries a keep-alive after about 5 s: an output chunk of no execution
        # and no text, which the client decodes like any chunk. A run's events still follow it.
        kinds = []

        def kind(event):
            chunk = event.event is not None and event.event.field == "output_chunk" and event.event.value
            if chunk and not chunk.execution_tracking_id and not chunk.output:
                return "keep-alive"
            return event.event.field if event.event is not None else None

        async def quiet():
            stream = client.event_stream(pb.EventStreamRequest(), timeout_ms=30000)
            async for event in stream:
                kinds.append(kind(event))
                if "id" in wanted and wanted["id"] in str(event) and kind(event) == "execution_finished":
                    return

        wanted.clear()
        listener = asyncio.create_task(quiet())
        for _ in range(120):
            if kinds:
                break
            await asyncio.sleep(0.1)
        assert kinds == ["keep-alive"], f"the first message of a quiet stream: {kinds}"
        started = await client.start_action(pb.StartActionRequest(action_id="hello"))
        wanted["id"] = started.execution_tracking_id
        await asyncio.wait_for(listener, 15)
        assert "execution_started" in kinds, kinds
        print(f"python connectrpc client: a quiet stream's messages: {kinds}")


def main():
    binary = os.environ.get("ACTIOND_BIN", "target/debug/actiond")
    with tempfile.TemporaryDirectory() as directory:
        proc, base = start(os.path.abspath(binary), directory)
        try:
            for name, codec in [("binary (the default)", None), ("JSON", proto_json_codec())]:
                asyncio.run(check(base, codec))
                print(f"python connectrpc client, {name} codec: ok")
        finally:
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    main()
