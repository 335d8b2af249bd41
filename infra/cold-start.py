#!/usr/bin/env python3
"""A Lambda binary's cold start on this machine: from its start to its first ask for an event.

`infra/cold-start.py target/lambda/tick/bootstrap …` starts each binary under a stand-in for
the Lambda runtime API (a local port named by AWS_LAMBDA_RUNTIME_API) and times the moment it
asks for its first event (`GET /2018-06-01/runtime/invocation/next`): loading the binary, the
configuration, the SDK clients and the warm-up read, which the same local port answers as
DynamoDB would for an empty table (so neither an emulator nor the network is timed). The
median of five starts each. No TLS handshake here, which AWS adds to the warm-up read.
"""
import http.server
import os
import statistics
import subprocess
import sys
import threading
import time

RUNS = 5


class Asked(http.server.BaseHTTPRequestHandler):
    asked_at = None
    event = threading.Event()

    def do_GET(self):  # noqa: N802 (the http.server API)
        if "/runtime/invocation/next" in self.path and not Asked.event.is_set():
            Asked.asked_at = time.monotonic()
            Asked.event.set()
        # Hold the binary here: it is ready, which is all that is measured.
        time.sleep(0.5)

    def do_POST(self):  # noqa: N802 (the http.server API)
        # The warm-up read (DynamoDB GetItem): no item.
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def start_once(binary, port):
    Asked.event.clear()
    env = dict(os.environ)
    env.update({
        "AWS_LAMBDA_RUNTIME_API": f"127.0.0.1:{port}",
        "AWS_LAMBDA_FUNCTION_NAME": os.path.basename(os.path.dirname(binary)) or "fn",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_REGION": env.get("AWS_REGION", "us-east-1"),
        "AWS_ACCESS_KEY_ID": env.get("AWS_ACCESS_KEY_ID", "testing"),
        "AWS_SECRET_ACCESS_KEY": env.get("AWS_SECRET_ACCESS_KEY", "testing"),
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "OPENLOOP_SIGNING_KEY": env.get("OPENLOOP_SIGNING_KEY", "cold-start"),
        "OPENLOOP_ADMIN_TOKEN": env.get("OPENLOOP_ADMIN_TOKEN", "cold-start"),
        "OPENLOOP_INBOUND_TOKEN": env.get("OPENLOOP_INBOUND_TOKEN", "cold-start"),
        # Required in Lambda (the template sets it for every function): the one SNS topic
        # whose inbound texts are read.
        "OPENLOOP_INBOUND_SMS_TOPIC_ARN": env.get(
            "OPENLOOP_INBOUND_SMS_TOPIC_ARN", "arn:aws:sns:us-east-1:000000000000:openloop-inbound-sms"
        ),
        # Required in Lambda too: the KMS key that seals the gyms' secrets (not called at start).
        "OPENLOOP_KMS_KEY_ID": env.get("OPENLOOP_KMS_KEY_ID", "arn:aws:kms:us-east-1:000000000000:key/cold-start"),
        "RUST_LOG": "off",
    })
    started = time.monotonic()
    child = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = started + 20
    # Until it asks, exits (a configuration error) or takes 20 s.
    while not (ready := Asked.event.wait(timeout=0.01)) and child.poll() is None and time.monotonic() < deadline:
        pass
    child.kill()
    _, err = child.communicate()
    if not ready:
        return None, err.decode(errors="replace").strip().splitlines()[-1:] or ["(nothing on stderr)"]
    return (Asked.asked_at - started) * 1000.0, None


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Asked)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    failed = False
    for binary in sys.argv[1:]:
        runs = [start_once(binary, port) for _ in range(RUNS)]
        times = [t for t, _ in runs if t is not None]
        name = os.path.basename(os.path.dirname(binary)) or binary
        if times:
            print(f"{name:<12} cold start {statistics.median(times):7.1f} ms (start to ready, median of {len(times)})")
        else:
            print(f"{name:<12} never asked for an event: {runs[-1][1][0]}")
            failed = True
    server.shutdown()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
