-- wrk: the live path: an Acme staff member asks about a room's occupancy right now (the scripted
-- provider answers LIVE-PATH questions with one get_occupancy call, then text).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-Gateway-Claims"] = "eyJzdWIiOiJiZW5jaCIsIm1lbWJlcnNoaXBzIjpbeyJkb21haW4iOiJhY21lIiwicm9sZSI6ImJ1c2luZXNzX3N0YWZmIn1dfQ=="
wrk.body = '{"question": "How many people are in Meeting Room Aurora (hq-101) of acme-hq right now? LIVE-PATH"}'
