set -x
nvidia-smi --query-gpu=name --format=csv,noheader
lscpu | grep -E "Model name|Flags" | cut -c1-200
t0=$(date +%s)
make _build PY=python3 BUILD=build/gpu CUDA=ON JOBS=16 > $OUT/build.log 2>&1 || { tail -50 $OUT/build.log; exit 1; }
echo build $(( $(date +%s)-t0 ))s
PYTHONPATH=python python3 .gpu/xmachine.py $OUT > $OUT/xmachine.txt 2>&1; tail -3 $OUT/xmachine.txt
PYTHONPATH=python:. timeout 120 python3 -m bench.fingerprint --device cpu --device cuda --out $OUT/fingerprint.json > $OUT/fingerprint.txt 2>&1; tail -3 $OUT/fingerprint.txt
echo fp $(( $(date +%s)-t0 ))s
timeout $(( 560 - ($(date +%s)-t0) )) make test-gpu JOBS=16 > $OUT/test-gpu.log 2>&1; echo rc=$?
cp build/gpu/test-logs/*.txt $OUT/ 2>/dev/null; cat build/gpu/test-summary.txt
grep -E "^(FAILED|ERROR)" build/gpu/test-logs/pytest.txt | head -40
echo total $(( $(date +%s)-t0 ))s
