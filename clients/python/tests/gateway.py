"""Where the gateway under test is: the test runner (packages/gateway/test/pythonPackage.test.ts) starts a real
one and passes its addresses in the environment. Without them the tests that need it are skipped."""
import os
import unittest

ADDRESS = os.environ.get("ATTR_RAG_TEST_ADDRESS")
HTTP = os.environ.get("ATTR_RAG_TEST_HTTP")
TOKEN = os.environ.get("ATTR_RAG_TEST_TOKEN")
WEBHOOK_SECRET = os.environ.get("ATTR_RAG_TEST_WEBHOOK_SECRET")
QUESTION = os.environ.get("ATTR_RAG_TEST_QUESTION", "Explain all the required steps of the acetaminophen synthesis.")
# Small settings: the test model is a 260K-parameter llama on two CPU cores.
SMALL = {"k": 4, "max_tokens": 8}

needs_gateway = unittest.skipUnless(ADDRESS, "set ATTR_RAG_TEST_ADDRESS (and _HTTP, _TOKEN, _WEBHOOK_SECRET) to a running gateway")
