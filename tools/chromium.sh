# Sourced by run-tests.sh (not by run-main.sh: only the tests need a browser): Debian's
# Chromium and its WebDriver, for tests/monitoring/test_browser.py (the training page in a real browser).
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "Installing chromium and chromium-driver (Debian packages) for the browser test ..."
        if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
                apt-get install -y -qq chromium chromium-driver >/dev/null; }; then
            echo "Could not install chromium; tests/monitoring/test_browser.py will be skipped." >&2
        fi
    else
        echo "No /usr/bin/chromium, and apt-get needs root: tests/monitoring/test_browser.py will be" \
             "skipped (install the chromium and chromium-driver packages to run it)." >&2
    fi
fi
