#!/bin/sh
echo "1..0 # SKIP being written"
