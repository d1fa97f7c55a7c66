// The sign-in page's one step: open the dashboard. A navigation this
// same-origin page starts carries the session cookie just set.
"use strict";
location.replace("/");
