-- wrk: the documentation path that finds passages: a question the project's user documentation
-- answers (the scripted provider answers it from the first passage, with its marker).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"question": "How do I calibrate a CO2 sensor?"}'
