# perfembed: one image for the API (`perfembed serve`), the tuning workers (`perfembed worker`) and
# the one-shot migration that also loads the shipped seed into an empty database (`perfembed db
# upgrade && perfembed seed load --if-empty`); see docker-compose.yml. Every COPY source must not be
# excluded by .dockerignore (tests/service/test_compose.py checks both files).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# gcc with OpenMP (libgomp) and the C preprocessor: the frontend runs cpp, the sandbox (bubblewrap)
# compiles and runs every candidate variant.
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc cpp libc6-dev libgomp1 bubblewrap \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
# Dependencies first, so that a code change does not reinstall them.
COPY pyproject.toml README.md ./
RUN mkdir -p loopnest embeddings database autotune service \
    && pip install . \
    && pip uninstall -y perfembed
COPY loopnest ./loopnest
COPY embeddings ./embeddings
COPY database ./database
COPY autotune ./autotune
COPY service ./service
COPY perfembed ./perfembed
COPY benchmarks ./benchmarks
RUN pip install --no-deps .
# The shipped seed database (402 tuned nests): the first start loads it into the empty database.
COPY seed/perfembed-seed.jsonl.gz ./seed/perfembed-seed.jsonl.gz

RUN useradd --create-home --uid 10001 perfembed \
    && mkdir -p /data \
    && chown perfembed /data
USER perfembed
ENV PERFEMBED_DATA_DIR=/data \
    PERFEMBED_SEED_FILE=/app/seed/perfembed-seed.jsonl.gz
VOLUME ["/data"]
EXPOSE 8000

CMD ["perfembed", "serve", "--host", "0.0.0.0", "--port", "8000"]
