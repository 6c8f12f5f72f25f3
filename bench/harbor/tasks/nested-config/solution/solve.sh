#!/bin/bash
set -e
mkdir -p config && printf "port=8080\n" > config/app.conf
