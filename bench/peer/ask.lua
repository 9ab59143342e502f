-- wrk: every request is the same /ask question, no tools, no stream.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"question": "When is the lobby of building A open?"}'
