# The production image: one image, three commands (web, worker, beat), as in docker-compose.yml.
FROM node:20-bookworm-slim AS assets
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
COPY scripts/vendor-assets scripts/
RUN npm ci && scripts/vendor-assets node_modules /assets

FROM python:3.12-slim-bookworm
# Java runs the PySpark jobs that the worker and beat start.
RUN apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY kmqadmin kmqadmin
RUN pip install --no-cache-dir '.[console]'
COPY manage.py ./
COPY templates templates
COPY static static
COPY --from=assets /assets static/vendor
ENV KMQ_DATA_DIR=/data
RUN mkdir -p /data && DJANGO_SECRET_KEY=build python manage.py collectstatic --noinput
EXPOSE 8000
