"""`GET /dashboard`: what the bot did, for people (deliveries, device runs, kernel speed)."""
