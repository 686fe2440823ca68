# The web/worker image: one image, four commands (webapp/ops/processes.py: gunicorn for the site,
# the grading worker, the runs worker, beat). Runs as a non-root user.
#
# BASE_IMAGE is the Python it is built on, JS_IMAGE the image the JavaScript stage runs in.
# By default both come from the public registry. Where none can be reached, `mleboard images
# --stack` builds a base from Debian's packages (Python 3.11 with every dependency, its pip
# installing from its own wheels only) and prints the arguments that use it for both, the
# JavaScript then being what `npm ci --prefix web` installed on the host (docs/operate.md).
ARG BASE_IMAGE=python:3.11-slim-bookworm
ARG JS_IMAGE=node:20-bookworm-slim

# The JavaScript the site serves (web/package-lock.json: Plotly's partial bundle), in a stage
# of its own: the image itself has no Node. A bundle the host installed from this very lock
# (`make setup`, `npm ci --prefix web`: it leaves the lock's copy as its stamp) is taken as
# it is; otherwise npm installs it.
FROM ${JS_IMAGE} AS js
WORKDIR /web
COPY web/ ./
RUN if ! cmp -s package-lock.json node_modules/.mleboard-installed-lock; then \
      command -v npm >/dev/null \
      || { echo "JS_IMAGE has no npm: run 'npm ci --prefix web' on the host first" >&2; exit 1; }; \
      rm -rf node_modules && npm ci --no-audit --no-fund --loglevel=error; \
    fi

FROM ${BASE_IMAGE}

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
# gunicorn as webapp/ops/processes.py starts it (no control socket; graceful stop).
CMD ["python", "-m", "webapp.ops.processes", "run", "web"]
