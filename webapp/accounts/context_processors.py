from webapp.accounts.signup import how_to_get_an_account, signup_mode


def signup(request) -> dict:
    """Whether the navigation offers "Sign up", and what the sign-in page says about
    getting an account."""
    return {"signup_mode": signup_mode(), "how_to_get_an_account": how_to_get_an_account()}
