#!/usr/bin/env bash
# A whole survey against the fake GitHub (50 ms per request by default): requests vs the
# minimum, wall time vs minimum × latency ÷ concurrency, a warm repeat, peak memory by size.
#   benches/survey.sh [RUNS ...]            e.g. benches/survey.sh 500 2000 4000
#   LATENCY_MS=50 CONCURRENCY=4 PROFILE=bench benches/survey.sh
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo bench --profile "${PROFILE:-bench}" --bench survey -- "$@"
