"""Decode speed of the same 1.5B through EmbeddedLLM (in-process call), a plain xllamacpp server, and
EmbeddedLLM.stream (SSE over the private socket), called A B C C B A. Usage: python bench/stream_vs_direct.py"""
import sys, time, os, uuid, json
from pathlib import Path
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src")); sys.path.insert(0, str(ROOT / "bench"))
from legalrag.wiring import make_llm
from legalrag.llm.base import ChatRequest
from prefill_configs import make_server
llm = make_llm("qwen2.5-1.5b", cache=False, threads=2).load()
plain = make_server(str(llm.path), 4096, 2, {})
def msgs(): return [{"role":"system","content":f"[{uuid.uuid4().hex}] 你是法律助手。"},{"role":"user","content":"请用三句话解释什么是违约金。"}]
for rep in range(2):
    for mode in (["emb_chat","plain","emb_stream"] if rep % 2 == 0 else ["emb_stream","plain","emb_chat"]):
        body = {"messages": msgs(), "max_tokens": 32, "temperature": 0}
        t0 = time.perf_counter()
        if mode == "plain":
            tm = plain.handle_chat_completions(body)["timings"]
        elif mode == "emb_chat":
            tm = llm._server.handle_chat_completions(body)["timings"]
        else:
            st = llm.stream(ChatRequest(messages=tuple(body["messages"]), max_tokens=32))
            for _ in st: pass
            tm = st.result.timings
        print(mode, rep, "prefill", round(tm.get("prompt_per_second",0),1), "decode", round(tm.get("predicted_per_second",0),2), "wall", round(time.perf_counter()-t0,1), "load", os.getloadavg()[0], flush=True)
llm.close()
