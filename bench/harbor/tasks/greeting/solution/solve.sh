#!/bin/bash
set -e
printf "hello from axon\n" > greeting.txt
