#!/bin/bash
# Reward 1 when the file the instruction asks for holds what it asks.
if [ "$(cat /app/greeting.txt 2>/dev/null)" = "hello from axon" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
