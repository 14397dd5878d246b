"""verify_webhook on its own (no gateway): the Standard Webhooks rules a receiver relies on."""
import json
import time
import unittest

from attr_rag import WebhookVerificationError, sign_webhook, verify_webhook

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
BODY = json.dumps({"type": "batch.completed", "data": {"id": "nightly"}}).encode()


def signed(stamp=None, secret=SECRET, body=BODY):
    stamp = str(int(time.time()) if stamp is None else stamp)
    return {"Webhook-Id": "evt_1", "Webhook-Timestamp": stamp, "Webhook-Signature": sign_webhook(secret, "evt_1", stamp, body)}


class VerifyWebhookTest(unittest.TestCase):
    def test_a_genuine_delivery_returns_its_event(self):
        self.assertEqual(verify_webhook(signed(), BODY, SECRET)["data"]["id"], "nightly")

    def test_any_of_several_signatures_may_match_while_a_secret_rotates(self):
        headers = signed()
        headers["Webhook-Signature"] = "v1,bm90LXRoaXMtb25l " + headers["Webhook-Signature"]
        self.assertEqual(verify_webhook(headers, BODY, SECRET)["type"], "batch.completed")

    def test_a_changed_body_another_secret_or_an_old_timestamp_is_refused(self):
        with self.assertRaisesRegex(WebhookVerificationError, "no webhook-signature matches"):
            verify_webhook(signed(), BODY.replace(b"nightly", b"other"), SECRET)
        with self.assertRaisesRegex(WebhookVerificationError, "no webhook-signature matches"):
            verify_webhook(signed(secret="whsec_" + "A" * 32), BODY, SECRET)
        with self.assertRaisesRegex(WebhookVerificationError, "replay"):
            verify_webhook(signed(stamp=int(time.time()) - 301), BODY, SECRET)

    def test_missing_headers_and_a_malformed_secret_say_what_is_wrong(self):
        with self.assertRaisesRegex(WebhookVerificationError, "missing header webhook-signature"):
            verify_webhook({"webhook-id": "x", "webhook-timestamp": "1"}, BODY, SECRET)
        with self.assertRaisesRegex(WebhookVerificationError, "not whsec_ followed by base64"):
            verify_webhook(signed(), BODY, "whsec_%%%")


if __name__ == "__main__":
    unittest.main()
