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
RUN SECRET_KEY=build python manage.py collectstatic --noinput -v0

USER mleboard
EXPOSE 8000
ENV HOST=0.0.0.0 PORT=8000 WEB_CONCURRENCY=3
# gunicorn as webapp/processes.py starts it (no control socket; graceful stop).
CMD ["python", "-m", "webapp.processes", "run", "web"]
