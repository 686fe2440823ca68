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
CMD ["gunicorn", "webapp.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
