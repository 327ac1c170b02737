"""The class poll in a real browser: a teacher's page and two students' phone-size pages on one server.

The teacher opens a session and asks a question through the page; the students join with the code shown on
the teacher's screen and answer; the teacher's count rises without a reload; the reveal reaches the students'
pages; a student who reloads keeps their answer. Same server and Chromium as test_browser.py (fixtures in
tests/conftest.py; skipped where no chromium is installed).
"""
import re

import pytest

from browsertest import page_at, wait_for_app  # skips this module where no chromium is installed

pytestmark = pytest.mark.browser


def _student(browser, app_url, code, nickname, answer):
    ctx = page_at(browser, 390, 844)
    pg = ctx.__enter__()
    pg.goto(f"{app_url}/poll")
    wait_for_app(pg)
    pg.get_by_label("Join code").fill(code)
    pg.get_by_label("Nickname (optional)").fill(nickname)
    pg.get_by_role("button", name="Join").click()
    pg.get_by_text(f"Session {code}").wait_for(timeout=30_000)
    pg.get_by_label("Your answer").wait_for(timeout=30_000)
    pg.get_by_label("Your answer").fill(answer)
    pg.get_by_role("button", name="Send").click()
    pg.get_by_text(re.compile(r"Your answer: " + re.escape(answer))).wait_for(timeout=30_000)
    return ctx, pg


def test_two_students_answer_and_the_teacher_reveals(browser, app_url):
    with page_at(browser, 1280, 800) as teacher:
        teacher.goto(f"{app_url}/poll")
        wait_for_app(teacher)
        teacher.get_by_role("button", name="Open a class session").click()
        teacher.wait_for_url(re.compile(r"key="), timeout=30_000)
        wait_for_app(teacher)
        code = re.search(r"code=([A-Z0-9]{6})", teacher.url).group(1)
        teacher.get_by_role("button", name="Ask this question").click()     # the default: exercise 1, variant 0
        wait_for_app(teacher)
        teacher.get_by_role("button", name="Open answering").click()
        teacher.get_by_text(re.compile("Question 1: KV cache per token")).wait_for(timeout=30_000)
        # Exercise 1, variant 0: Llama-3-8B keeps 2 x 32 x 8 x 128 x 2 B = 131,072 B = 128 KiB per token.
        ann_ctx, ann = _student(browser, app_url, code, "Ann", "128")
        bob_ctx, bob = _student(browser, app_url, code, "Bob", "64")
        try:
            teacher.get_by_text("2 of 2").wait_for(timeout=15_000)          # the count updates by itself
            assert not teacher.get_by_text("Answer: 128 KiB").count()
            teacher.get_by_role("button", name="Reveal").click()
            teacher.get_by_text(re.compile(r"Answer: 128 KiB")).wait_for(timeout=30_000)
            teacher.get_by_text(re.compile("forget the factor 2 for K and V")).wait_for(timeout=15_000)
            assert teacher.get_by_role("link", name=re.compile("Show why")).get_attribute("href").startswith("kv_cache?")
            ann.get_by_text("The answer: 128 KiB (within 1%).").wait_for(timeout=15_000)
            bob.get_by_text(re.compile(r"Yours: About half the answer")).wait_for(timeout=15_000)
            assert not bob.get_by_text("Your answer: 128").count()         # never another student's answer
            bob.reload()                                                    # the URL keeps the student
            bob.get_by_text("Your answer: 64 KiB").wait_for(timeout=60_000)
        finally:
            ann_ctx.__exit__(None, None, None)
            bob_ctx.__exit__(None, None, None)
