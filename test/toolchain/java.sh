#!/usr/bin/env bash
# mvn -q test of a one-class project with JUnit 4, from Maven Central (lib.bash).
. "${CW_SRC:?}/test/toolchain/lib.bash"
tc_need mvn /usr/bin/mvn
command -v javac >/dev/null || { echo "SKIP: no javac (default-jdk-headless)"; exit 77; }
tc_main java "CW_TC_MVN=$TC_TOOL" repo.maven.apache.org
