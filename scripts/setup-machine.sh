#!/usr/bin/env bash
# Installs the system packages the tests need, when missing: Java 17 (DynamoDB Local) and
# Chromium (the share page's browser tests, driven by playwright-core; never a downloaded browser).
# The same step `npm test` runs first (scripts/setup-tests.mjs: plain Node, usable before `npm ci`).
set -euo pipefail
exec node "$(dirname "$0")/setup-tests.mjs"
