"""flagbot's server side: the GitHub App (webhooks in, labels / check runs / comments out)."""
