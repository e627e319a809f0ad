import os
import smtplib
import sys
from email.message import EmailMessage

msg = EmailMessage()
msg["Subject"] = "Weekly report"
msg["From"] = os.environ["REPORT_FROM"]
msg["To"] = os.environ["REPORT_TO"]
msg.set_content(open(sys.argv[1], encoding="utf-8").read())
with smtplib.SMTP_SSL(os.environ["SMTP_HOST"], 465) as smtp:
    smtp.login(os.environ["SMTP_USER"], os.environ["SMTP_PASSWORD"])
    smtp.send_message(msg)
print("sent")
