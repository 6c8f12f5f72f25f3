//! Realistic secrets, made at run time from a fixed seed: each has its
//! provider's shape and random-looking characters, and no source file
//! holds one (a scanner of this repository finds none here).

/// A fixed-seed generator (xorshift64): the same samples on every run.
pub struct Chars(u64);

pub const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub const UPPER_B32: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
pub const HEX: &str = "0123456789abcdef";
pub const DIGITS: &str = "0123456789";
pub const URLSAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
pub const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

impl Chars {
    pub fn new(seed: u64) -> Chars {
        Chars(seed.max(1))
    }

    pub fn take(&mut self, alphabet: &str, n: usize) -> String {
        let alphabet = alphabet.as_bytes();
        (0..n)
            .map(|_| {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                char::from(alphabet[(self.0 % alphabet.len() as u64) as usize])
            })
            .collect()
    }
}

/// One sample: the kinds a finding may be named (gitleaks' rule first,
/// then axon's that cover the same shape), a line holding the secret as
/// it would appear in a file or a command's output, and the secret.
pub struct Sample {
    pub what: &'static str,
    pub kinds: &'static [&'static str],
    pub line: String,
    pub secret: String,
}

pub fn samples() -> Vec<Sample> {
    let mut r = Chars::new(0x5EC2E75);
    let mut out = Vec::new();
    let mut add = |what, kinds, line: String, secret: String| {
        out.push(Sample { what, kinds, line, secret });
    };
    let openai_proj = format!(
        "sk-proj-{}{}{}",
        r.take(URLSAFE, 74),
        ["T3Blbk", "FJ"].concat(),
        r.take(URLSAFE, 74)
    );
    add(
        "OpenAI project key",
        &["openai-api-key", "sk-style-key"],
        format!("OPENAI_API_KEY={openai_proj}"),
        openai_proj,
    );
    let openai_legacy =
        format!("sk-{}{}{}", r.take(ALNUM, 20), ["T3Blbk", "FJ"].concat(), r.take(ALNUM, 20));
    add(
        "OpenAI legacy key",
        &["openai-api-key", "sk-style-key"],
        format!("  \"api_key\": \"{openai_legacy}\","),
        openai_legacy,
    );
    let anthropic = format!("{}{}AA", ["sk-ant-", "api03-"].concat(), r.take(URLSAFE, 93));
    add(
        "Anthropic key",
        &["anthropic-api-key", "sk-style-key"],
        format!("export ANTHROPIC_API_KEY={anthropic}"),
        anthropic,
    );
    let anthropic_admin = format!("{}{}AA", ["sk-ant-", "admin01-"].concat(), r.take(URLSAFE, 93));
    add(
        "Anthropic admin key",
        &["anthropic-admin-api-key", "sk-style-key"],
        format!("admin = '{anthropic_admin}'"),
        anthropic_admin,
    );
    let deepseek = format!("sk-{}", r.take(HEX, 32));
    add(
        "DeepSeek key",
        &["sk-style-key", "generic-api-key"],
        format!("DEEPSEEK_API_KEY=\"{deepseek}\""),
        deepseek,
    );
    let aws_id = format!("{}{}", ["AK", "IA"].concat(), r.take(UPPER_B32, 16));
    add(
        "AWS access key id",
        &["aws-access-token", "aws-access-key-id"],
        format!("aws_access_key_id = {aws_id}"),
        aws_id,
    );
    let aws_secret = r.take(B64, 40);
    add(
        "AWS secret access key",
        &["secret-assignment", "generic-api-key", "aws-secret-access-key"],
        format!("aws_secret_access_key = {aws_secret}"),
        aws_secret,
    );
    let ghp = format!("{}{}", ["gh", "p_"].concat(), r.take(ALNUM, 36));
    add(
        "GitHub classic token",
        &["github-pat", "github-token"],
        format!("git clone https://x-access-token:{ghp}@github.com/o/r"),
        ghp,
    );
    let gh_fine = format!("{}{}", ["github", "_pat_"].concat(), r.take(ALNUM, 82));
    add(
        "GitHub fine-grained token",
        &["github-fine-grained-pat"],
        format!("token: {gh_fine}"),
        gh_fine,
    );
    let glpat = format!("{}{}", ["gl", "pat-"].concat(), r.take(URLSAFE, 20));
    add("GitLab token", &["gitlab-pat"], format!("GITLAB_TOKEN={glpat}"), glpat);
    let xoxb = format!(
        "{}{}-{}-{}",
        ["xo", "xb-"].concat(),
        r.take(DIGITS, 12),
        r.take(DIGITS, 13),
        r.take(ALNUM, 24)
    );
    add("Slack bot token", &["slack-bot-token"], format!("SLACK_BOT_TOKEN={xoxb}"), xoxb);
    let stripe = format!("{}{}", ["sk_", "live_"].concat(), r.take(ALNUM, 24));
    add(
        "Stripe secret key",
        &["stripe-access-token"],
        format!("Stripe.api_key = \"{stripe}\""),
        stripe,
    );
    let google = format!("{}{}", ["AI", "za"].concat(), r.take(URLSAFE, 35));
    add("Google API key", &["gcp-api-key"], format!("GOOGLE_MAPS_KEY=\"{google}\""), google);
    let key_body: Vec<String> = (0..6).map(|_| r.take(B64, 64)).collect();
    let pem = format!(
        "-----BEGIN RSA {}-----\n{}\n-----END RSA {}-----",
        "PRIVATE KEY",
        key_body.join("\n"),
        "PRIVATE KEY"
    );
    add("RSA private key", &["private-key"], pem.clone(), pem);
    let ssh = format!(
        "-----BEGIN OPENSSH {}-----\n{}\n-----END OPENSSH {}-----",
        "PRIVATE KEY",
        key_body[..3].join("\n"),
        "PRIVATE KEY"
    );
    add("OpenSSH private key", &["private-key"], ssh.clone(), ssh);
    let jwt = format!(
        "{}.{}.{}",
        ["eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"].concat(),
        ["ey", &r.take(URLSAFE, 60)].concat(),
        r.take(URLSAFE, 43)
    );
    add(
        "JWT",
        &["jwt", "authorization-scheme", "secret-assignment"],
        format!("Authorization: Bearer {jwt}"),
        jwt,
    );
    let pg_pass = r.take(ALNUM, 18);
    add(
        "Postgres URL",
        &["url-password"],
        format!("DATABASE_URL=postgres://app:{pg_pass}@db.internal:5432/app"),
        pg_pass,
    );
    let mongo_pass = r.take(ALNUM, 16);
    add(
        "MongoDB URL",
        &["url-password"],
        format!("mongodb+srv://admin:{mongo_pass}@cluster0.example.net/test"),
        mongo_pass,
    );
    let redis_pass = r.take(ALNUM, 20);
    add(
        "Redis URL",
        &["url-password"],
        format!("REDIS_URL=redis://:{redis_pass}@cache:6379/0"),
        redis_pass,
    );
    let generic = r.take(ALNUM, 32);
    add(
        "high-entropy value under a key name",
        &["generic-api-key", "secret-assignment"],
        format!("client_secret: \"{generic}\""),
        generic,
    );
    let generic2 = r.take(HEX, 40);
    add(
        "hex token under a key name",
        &["generic-api-key", "secret-assignment"],
        format!("MY_SERVICE_TOKEN={generic2}"),
        generic2,
    );
    out
}
