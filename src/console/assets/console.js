/* global document */
// payflow-bridge console: small enhancements on pages that work without them.
// "Copy for ticket": a button (hidden without JavaScript, where the text area is there to
// select by hand) copies the text area it names.
'use strict';

function enhanceCopyButtons() {
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const target = document.getElementById(button.getAttribute('data-copy'));
    const status = document.querySelector(
      `[data-copy-status="${button.getAttribute('data-copy')}"]`,
    );
    if (target === null) continue;
    button.hidden = false;
    button.addEventListener('click', () => {
      const done = (text) => {
        if (status !== null) status.textContent = text;
      };
      const fallback = () => {
        target.focus();
        target.select();
        done(document.execCommand('copy') ? 'Copied.' : 'Select the text and copy it.');
      };
      if (navigator.clipboard !== undefined) {
        navigator.clipboard.writeText(target.value).then(() => done('Copied.'), fallback);
      } else {
        fallback();
      }
    });
  }
}

// Asks before a form whose button says data-confirm is sent (replays, verdicts).
function confirmActions() {
  for (const form of document.querySelectorAll('form[data-confirm]')) {
    form.addEventListener('submit', (event) => {
      if (!globalThis.confirm(form.getAttribute('data-confirm'))) event.preventDefault();
    });
  }
}

enhanceCopyButtons();
confirmActions();
