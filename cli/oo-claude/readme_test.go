package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// TestReadmeVerbs holds the README's "Verbs" section to the binary: each
// synopsis there (an indented line starting "oo-claude ", with its
// continuation lines) is a USAGE line of `oo-claude help VERB`, every verb
// has one, and each example command ("$ oo-claude …") parses: its verb
// exists and every flag it gives is one of the verb's.
func TestReadmeVerbs(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var synopses, examples []string
	in := false
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "## ") {
			in = l == "## Verbs"
			continue
		}
		if !in {
			continue
		}
		switch {
		case strings.HasPrefix(l, "    $ oo-claude "):
			examples = append(examples, strings.TrimPrefix(l, "    $ "))
		case strings.HasPrefix(l, "    oo-claude "):
			s := strings.TrimPrefix(l, "    ")
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "        ") && strings.TrimSpace(lines[i+1]) != "" {
				i++
				s += " " + strings.TrimSpace(lines[i])
			}
			synopses = append(synopses, s)
		}
	}
	root := &ffcli.Command{Name: "oo-claude"}
	e := newEnv(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, testProc(func(string) string { return "" }))
	for _, v := range verbs {
		root.Subcommands = append(root.Subcommands, v.make(e))
	}
	documented := map[string]bool{}
	for _, s := range synopses {
		c, path := selectedCmd(root, strings.Fields(s)[1:])
		if c == root {
			t.Errorf("README synopsis of no verb: %s", s)
			continue
		}
		documented[path[0]] = true
		var usages []string
		for _, u := range strings.Split(c.ShortUsage, " · ") {
			usages = append(usages, strings.Join(strings.Fields(u), " "))
			if strings.Join(strings.Fields(u), " ") == strings.Join(strings.Fields(s), " ") {
				usages = nil
				break
			}
		}
		if usages != nil {
			t.Errorf("README synopsis\n\t%s\nis not a USAGE line of oo-claude help %s:\n\t%s", s, strings.Join(path, " "), strings.Join(usages, "\n\t"))
		}
	}
	for _, c := range root.Subcommands {
		if !documented[c.Name] {
			t.Errorf("the README's Verbs section has no synopsis of %s", c.Name)
		}
	}
	if len(examples) == 0 {
		t.Fatal("no example commands found in the README's Verbs section")
	}
	for _, x := range examples {
		args, err := shellWords(x)
		if err != nil {
			t.Errorf("README example %s: %v", x, err)
			continue
		}
		c, path := selectedCmd(root, args[1:])
		if c == root {
			t.Errorf("README example of no verb: %s", x)
			continue
		}
		c.FlagSet.SetOutput(&bytes.Buffer{})
		if _, err := positional(c.FlagSet, args[1+len(path):]); err != nil {
			t.Errorf("README example %s: %v", x, err)
		}
	}
}

// shellWords splits a command line as sh does for plain words and
// double-quoted strings (the README's examples use nothing else).
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
			}
			inWord = false
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		return nil, errors.New("unbalanced quote")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
