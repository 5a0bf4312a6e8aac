# Sourced by the Inbox's browser tests: the real Chromium (scripts/setup installs it),
# driven by playwright-core from the engines' node modules (scripts/setup-engines);
# sets bindir and modules, and shots, the directory the screenshots go to
# ($CW_INBOX_SHOTS, default <build>/inbox-shots). Missing either: the test fails.
[ -x /usr/bin/chromium ] || { echo "FAIL - /usr/bin/chromium is missing (scripts/setup installs it)"; exit 1; }
bindir=$("$CW_SRC/scripts/setup-engines" | tail -n 1)
modules=$(dirname "$bindir")
[ -d "$modules/playwright-core" ] || { echo "FAIL - playwright-core is not in $modules"; exit 1; }
shots=${CW_INBOX_SHOTS:-${CW_BUILD:-/tmp}/inbox-shots}
mkdir -p "$shots"
