#!/usr/bin/env python3
"""Serves two local OpenAI-compatible providers behind one address, chosen per request by the
"model" field: requests naming the small model go to SMALL, every other request (the judge's,
the embeddings') to LARGE. Used to run the golden set with answers from one local model and
the judge on another (QUALITY.md). It only copies requests and replies; with LOG set, each
request and reply is appended to that file as one JSON line.

    SMALL=http://127.0.0.1:8080 LARGE=http://127.0.0.1:8081 python3 route-models.py 8090
"""
import json
import os
import sys
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SMALL = os.environ.get("SMALL", "http://127.0.0.1:8080")
LARGE = os.environ.get("LARGE", "http://127.0.0.1:8081")
SMALL_NAME = os.environ.get("SMALL_NAME", "0.5b")
LOG = os.environ.get("LOG")
HOP_BY_HOP = {"host", "content-length", "connection", "transfer-encoding"}


def upstream_for(body):
    try:
        model = json.loads(body).get("model") or ""
    except (ValueError, AttributeError):
        model = ""
    return SMALL if SMALL_NAME in model else LARGE


class Route(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_):
        pass

    def relay(self, method):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        target = upstream_for(body) if body else LARGE
        request = urllib.request.Request(target + self.path, data=body, method=method)
        for name, value in self.headers.items():
            if name.lower() not in HOP_BY_HOP:
                request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=1800) as reply:
                status, data, headers = reply.status, reply.read(), reply.headers
        except urllib.error.HTTPError as error:
            status, data, headers = error.code, error.read(), error.headers
        if LOG and body:
            with open(LOG, "a", encoding="utf-8") as log:
                record = {"req": body.decode("utf-8", "replace"), "resp": data.decode("utf-8", "replace")}
                log.write(json.dumps(record) + "\n")
        self.send_response(status)
        for name, value in headers.items():
            if name.lower() not in HOP_BY_HOP:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        self.relay("POST")

    def do_GET(self):
        self.relay("GET")


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Route).serve_forever()
