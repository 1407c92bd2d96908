"""Answers the first legal move one byte per write, spread over about 750 ms: the
answer is padded with leading spaces to PADDED bytes, each written alone."""

import json
import os
import sys
import time

SPREAD = 0.75
PADDED = 4000

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        os.write(1, json.dumps({"type": "hello", "name": "dribble", "version": "1.0.0"}).encode() + b"\n")
    elif message["type"] == "request":
        data = json.dumps({"type": "answer", "id": message["id"], "answer": message["legal"][0]}).encode() + b"\n"
        data = data.rjust(PADDED)
        pause = SPREAD / len(data)
        start = time.monotonic()
        for i in range(len(data)):
            os.write(1, data[i : i + 1])
            ahead = start + (i + 1) * pause - time.monotonic()
            if ahead > 0:  # behind (a busy machine), it catches up without sleeping
                time.sleep(ahead)
    elif message["type"] == "bye":
        break
