"""Which grader grades which competition.

Every competition id maps explicitly to the module that defines its grader: core column
metrics in ``_CORE_GRADER_MODULES`` below, complex ones in
``graders.competitions.index_complex``. Modules are imported only when one of their
competitions is graded, so grading a column metric never pays for pandas, scikit-learn or
shapely. How to add a competition, step by step: docs/architecture.md.
``tests/graders/test_registry.py`` checks that every catalogue id has a grader and that
each module's ``GRADERS`` agrees with this index.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from graders.results import UnknownCompetition

if TYPE_CHECKING:
    from graders.core import CompetitionGrader

_ACCURACY = "graders.competitions.accuracy"
_AUC = "graders.competitions.auc"
_LOG_LOSS = "graders.competitions.log_loss"
_REGRESSION = "graders.competitions.regression"
_MEASUREMENT = "graders.competitions.measurement"
_LABEL_SETS = "graders.competitions.label_sets"
_DEMO = "graders.competitions.demo"

# Competitions graded by column metrics (owned by graders-core).
_CORE_GRADER_MODULES: dict[str, str] = {
    # accuracy and its relatives
    "cassava-leaf-disease-classification": _ACCURACY,
    "cdiscount-image-classification-challenge": _ACCURACY,
    "iwildcam-2020-fgvc7": _ACCURACY,
    "ml2021spring-hw2": _ACCURACY,
    "movie-review-sentiment-analysis-kernels-only": _ACCURACY,
    "paddy-disease-classification": _ACCURACY,
    "spaceship-titanic": _ACCURACY,
    "tabular-playground-series-dec-2021": _ACCURACY,
    "tensorflow-speech-recognition-challenge": _ACCURACY,
    "text-normalization-challenge-english-language": _ACCURACY,
    "text-normalization-challenge-russian-language": _ACCURACY,
    "inaturalist-2019-fgvc6": _ACCURACY,
    "aptos2019-blindness-detection": _ACCURACY,
    "learning-agency-lab-automated-essay-scoring-2": _ACCURACY,
    "nfl-player-contact-detection": _ACCURACY,
    # F1 family, label sets and ranked lists
    "herbarium-2020-fgvc7": _LABEL_SETS,
    "herbarium-2021-fgvc8": _LABEL_SETS,
    "herbarium-2022-fgvc9": _LABEL_SETS,
    "iwildcam-2019-fgvc6": _LABEL_SETS,
    "facebook-recruiting-iii-keyword-extraction": _LABEL_SETS,
    "imet-2020-fgvc7": _LABEL_SETS,
    "plant-pathology-2021-fgvc8": _LABEL_SETS,
    "plant-seedlings-classification": _LABEL_SETS,
    "tensorflow2-question-answering": "graders.competitions.natural_questions",
    "h-and-m-personalized-fashion-recommendations": _LABEL_SETS,
    "hotel-id-2021-fgvc8": _LABEL_SETS,
    "whale-categorization-playground": _LABEL_SETS,
    "rsna-breast-cancer-detection": _LABEL_SETS,
    # ROC AUC family
    "aerial-cactus-identification": _AUC,
    "detecting-insults-in-social-commentary": _AUC,
    "histopathologic-cancer-detection": _AUC,
    "invasive-species-monitoring": _AUC,
    "mlsp-2013-birds": _AUC,
    "random-acts-of-pizza": _AUC,
    "rsna-miccai-brain-tumor-radiogenomic-classification": _AUC,
    "seti-breakthrough-listen": _AUC,
    "siim-isic-melanoma-classification": _AUC,
    "tabular-playground-series-may-2022": _AUC,
    "the-icml-2013-whale-challenge-right-whale-redux": _AUC,
    "jigsaw-toxic-comment-classification-challenge": _AUC,
    "plant-pathology-2020-fgvc7": _AUC,
    "playground-series-s3e18": _AUC,
    "ranzcr-clip-catheter-line-classification": _AUC,
    "alaska2-image-steganalysis": _AUC,
    "jigsaw-unintended-bias-in-toxicity-classification": _AUC,
    "freesound-audio-tagging-2019": _AUC,
    # log losses and divergences
    "dog-breed-identification": _LOG_LOSS,
    "leaf-classification": _LOG_LOSS,
    "lmsys-chatbot-arena": _LOG_LOSS,
    "spooky-author-identification": _LOG_LOSS,
    "dogs-vs-cats-redux-kernels-edition": _LOG_LOSS,
    "statoil-iceberg-classifier-challenge": _LOG_LOSS,
    "rsna-2022-cervical-spine-fracture-detection": _LOG_LOSS,
    "hms-harmful-brain-activity-classification": _LOG_LOSS,
    # regression errors and correlations
    "denoising-dirty-documents": _REGRESSION,
    "new-york-city-taxi-fare-prediction": _REGRESSION,
    "petfinder-pawpularity-score": _REGRESSION,
    "predict-volcanic-eruptions-ingv-oe": _REGRESSION,
    "ventilator-pressure-prediction": _REGRESSION,
    "nomad2018-predict-transparent-conductors": _REGRESSION,
    "stanford-covid-vaccine": _REGRESSION,
    "champs-scalar-coupling": _REGRESSION,
    "us-patent-phrase-to-phrase-matching": _REGRESSION,
    "google-quest-challenge": _REGRESSION,
    # physical measurements: angles, positions, clinical likelihoods
    "icecube-neutrinos-in-deep-ice": _MEASUREMENT,
    "smartphone-decimeter-2022": _MEASUREMENT,
    "osic-pulmonary-fibrosis-progression": _MEASUREMENT,
    # mleboard's own demo competitions
    "demo-digits": _DEMO,
    "demo-breast-cancer": _DEMO,
    "demo-diabetes": _DEMO,
    "demo-wine": _DEMO,
}


def grader_modules() -> dict[str, str]:
    """Competition id -> module path of its grader, for every registered competition."""
    from graders.competitions.index_complex import COMPLEX_GRADER_MODULES

    overlap = set(COMPLEX_GRADER_MODULES) & set(_CORE_GRADER_MODULES)
    if overlap:  # one explicit owner per competition
        raise RuntimeError(f"Competitions registered twice: {sorted(overlap)}")
    return {**_CORE_GRADER_MODULES, **COMPLEX_GRADER_MODULES}


def known_competitions() -> list[str]:
    """Every competition id that has a grader, sorted."""
    return sorted(grader_modules())


def grader_for(competition_id: str) -> CompetitionGrader:
    """The grader of ``competition_id``; raises ``UnknownCompetition`` when there is none."""
    module_path = grader_modules().get(competition_id)
    if module_path is None:
        raise UnknownCompetition(
            f"No grader for competition '{competition_id}'. "
            f"Known competitions: {len(grader_modules())} (see `known_competitions()`)."
        )
    module = importlib.import_module(module_path)
    try:
        return module.GRADERS[competition_id]
    except (AttributeError, KeyError):
        raise UnknownCompetition(
            f"Module {module_path} does not define a grader for '{competition_id}'."
        ) from None
