"""The peer of the /ask load benchmark: the minimal FastAPI service a user would otherwise write.
One handler making the same single chat-completions call to the same provider with httpx and
returning its text. Run by bench/serve-load.sh under uvicorn (one worker, uvloop, httptools)."""

import os
from contextlib import asynccontextmanager

import httpx
from fastapi import FastAPI
from pydantic import BaseModel

COMPLETIONS = os.environ["PROVIDER_URL"].rstrip("/") + "/v1/chat/completions"
clients = {}


@asynccontextmanager
async def lifespan(app):
    async with httpx.AsyncClient(timeout=60) as client:
        clients["provider"] = client
        yield


app = FastAPI(lifespan=lifespan)


class AskRequest(BaseModel):
    question: str


@app.post("/ask")
async def ask(request: AskRequest):
    call = {"model": "bench/model", "messages": [{"role": "user", "content": request.question}]}
    reply = await clients["provider"].post(COMPLETIONS, json=call)
    reply.raise_for_status()
    return {"answer": reply.json()["choices"][0]["message"]["content"]}
