# The JavaScript the site serves (web/package-lock.json: Plotly's partial bundle), installed
# by npm in a stage of its own: the image itself has no Node.
FROM node:20-bookworm-slim AS js
WORKDIR /web
COPY web/package.json web/package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error

# The web/worker image: one image, two commands (gunicorn for the site, celery for the
# worker). Runs as a non-root user.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    MLEBOARD_VAR_DIR=/var/lib/mleboard
WORKDIR /app

RUN useradd --create-home --uid 10001 mleboard \
 && mkdir -p /var/lib/mleboard && chown mleboard /var/lib/mleboard

COPY pyproject.toml README.md ./
COPY benchmark ./benchmark
COPY cli ./cli
COPY config ./config
COPY graders ./graders
COPY runner ./runner
COPY webapp ./webapp
RUN pip install --no-cache-dir .
COPY manage.py ./
COPY templates ./templates
COPY static ./static
COPY --from=js /web/node_modules ./web/node_modules
RUN SECRET_KEY=build python manage.py collectstatic --noinput -v0

USER mleboard
EXPOSE 8000
ENV HOST=0.0.0.0 PORT=8000 WEB_CONCURRENCY=3
# gunicorn as webapp/processes.py starts it (no control socket; graceful stop).
CMD ["python", "-m", "webapp.processes", "run", "web"]
