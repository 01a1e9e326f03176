"""Whether xllamacpp releases the GIL while the runtime starts: a Python loop in the main thread while
EmbeddedLLM.load runs in another. Usage: python bench/llm/load_gil.py"""
import threading
import time

from legalrag.wiring import make_llm

llm = make_llm("qwen2.5-1.5b", cache=False, threads=2)
t0 = time.perf_counter(); th = threading.Thread(target=llm.load); th.start()
n = 0; ticks = []
while th.is_alive():
    t = time.perf_counter(); sum(range(10000)); ticks.append(time.perf_counter() - t); n += 1
print("load", time.perf_counter() - t0, "python loops during load", n, "max gap", max(ticks) if ticks else None)
llm.close()
