"""The review permission, and ``RunCheck.reasons`` as facts instead of sentences.

Earlier checks stored sentences such as "100% similar to run 40 of another owner (A's
experiment)", shown to anyone who could see the checked run. Each is turned into the fact
it was written from (the numbers from the check's own fields where they are kept), and
``webapp.integrity.reasons`` tells it to each viewer as they may read it. The formats
below are the ones those versions wrote, kept here as they were."""

import re

from django.db import migrations

REFERENCE = re.compile(r"^(\d+)% similar to reference (.+) \(threshold (\d+)%\)$")
PEER = re.compile(r"^(\d+)% similar to run (\d+) of another owner")
LLM = re.compile(r"^LLM review says yes to (.+)$")
RULE = re.compile(r"^(.+): (\d+) findings?$")


def _fact(text: str, check) -> dict:
    if match := REFERENCE.match(text):
        return {
            "kind": "reference",
            "similarity": check.similarity if check.similarity is not None else int(match[1]) / 100,
            "threshold": check.threshold if check.threshold is not None else int(match[3]) / 100,
            "path": match[2],
        }
    if match := PEER.match(text):
        return {
            "kind": "peer",
            "similarity": check.peer_similarity
            if check.peer_similarity is not None
            else int(match[1]) / 100,
            "threshold": check.threshold if check.threshold is not None else 0.6,
            "run": int(match[2]),
        }
    if match := LLM.match(text):
        return {"kind": "llm", "question": match[1].replace(" ", "_")}
    if match := RULE.match(text):
        return {"kind": "rule", "check": match[1].replace(" ", "_"), "findings": int(match[2])}
    return {"kind": "unknown"}  # not a format any version wrote: told as "a reason"


def sentences_to_facts(apps, schema_editor):
    RunCheck = apps.get_model("integrity", "RunCheck")
    for check in RunCheck.objects.exclude(reasons=[]).iterator():
        if any(isinstance(r, str) for r in check.reasons):
            facts = [r if isinstance(r, dict) else _fact(r, check) for r in check.reasons]
            RunCheck.objects.filter(pk=check.pk).update(reasons=facts)


def facts_to_sentences(apps, schema_editor):
    RunCheck = apps.get_model("integrity", "RunCheck")
    for check in RunCheck.objects.exclude(reasons=[]).iterator():
        sentences = []
        for fact in check.reasons:
            kind = fact.get("kind") if isinstance(fact, dict) else None
            if kind == "reference":
                sentences.append(
                    f"{fact['similarity']:.0%} similar to reference {fact['path']} "
                    f"(threshold {fact['threshold']:.0%})"
                )
            elif kind == "peer":
                sentences.append(
                    f"{fact['similarity']:.0%} similar to run {fact['run']} of another owner"
                )
            elif kind == "llm":
                sentences.append(f"LLM review says yes to {fact['question'].replace('_', ' ')}")
            elif kind == "rule":
                count = fact["findings"]
                sentences.append(
                    f"{fact['check'].replace('_', ' ')}: {count} finding{'s' if count > 1 else ''}"
                )
            else:
                sentences.append(str(fact))
        RunCheck.objects.filter(pk=check.pk).update(reasons=sentences)


class Migration(migrations.Migration):
    dependencies = [
        ("integrity", "0001_initial"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="runcheck",
            options={
                "permissions": [
                    ("review_runcheck", "Can review run checks: disqualify, reopen, check again")
                ],
                "verbose_name": "run check",
            },
        ),
        migrations.RunPython(sentences_to_facts, facts_to_sentences),
    ]
