"""Where collectstatic puts the static files: WhiteNoise's manifest storage (each file
also under a name with its content's hash, which the pages link and WhiteNoise serves with
a year's ``immutable`` cache), compressing only what is worth it.

WhiteNoise compresses every file twice, its original name and its hashed one, source maps
included; that compression was most of collectstatic's time (every `make run`, image build
and site set-up). Here only the hashed names the pages link are compressed, and source maps
(fetched by a developer's browser tools, if ever) join the extensions WhiteNoise skips: an
original name is still served, uncompressed and briefly cached."""

from whitenoise.compress import Compressor
from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticFilesStorage(CompressedManifestStaticFilesStorage):
    def compress_files(self, paths):
        linked = set(self.hashed_files.values())
        yield from super().compress_files(path for path in paths if path in linked)

    def create_compressor(self, **kwargs):
        skipped = kwargs.get("extensions") or Compressor.SKIP_COMPRESS_EXTENSIONS
        return super().create_compressor(**{**kwargs, "extensions": (*skipped, "map")})
