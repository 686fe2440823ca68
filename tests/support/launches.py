"""Launching agent runs through the API as a person with the right to, and the sleeper
agent (an image that waits) the launch tests run."""

import json

from django.test import Client
from rest_framework.authtoken.models import Token


def api_for(user) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")


def launch(api, **body):
    response = api.post("/api/launches/", json.dumps(body), content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


SLEEPER_YAML = (
    "name: sleeper\ndescription: Sleeps; for cancel tests.\nstart: [sleep, '600']\negress: false\n"
)


SLEEPER_DOCKERFILE = "ARG BASE_IMAGE=mleboard/base:latest\nFROM ${BASE_IMAGE}\nCOPY --chown=1000:1000 . /home/agent\nWORKDIR /home/agent\nUSER agent\n"
