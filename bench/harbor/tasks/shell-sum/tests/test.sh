#!/bin/bash
# Reward 1 when the file the instruction asks for holds what it asks.
if [ "$(cat /app/answer.txt 2>/dev/null)" = "42" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
