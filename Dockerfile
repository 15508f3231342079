FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY stream_rag ./stream_rag
COPY static ./static
RUN pip install --no-cache-dir -e .
ENV STREAM_RAG_HOST=0.0.0.0 \
    STREAM_RAG_DATA_DIR=/data
VOLUME /data
EXPOSE 8000
CMD ["stream-rag", "serve", "--sample"]
