#!/bin/bash
# Reward 1 when the file the instruction asks for holds what it asks.
if grep -qx "port=8080" /app/config/app.conf 2>/dev/null; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
